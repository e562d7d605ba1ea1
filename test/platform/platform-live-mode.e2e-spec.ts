import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { PlatformConnection } from 'src/platform/platform-connection';
import { PlatformProbeController } from 'test/fixtures/platform-probe.controller';
import { liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

/**
 * With a bot token the service talks to DISCORD_API_URL only (here: an emulator the test runs, as
 * a stand-in for Discord), starts no emulator of its own and serves no demo routes.
 */
describe('with a bot token', () => {
  const platform = useEmulator();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      controllers: [PlatformProbeController],
      env: { ...liveModeEnv(platform()), PLATFORM_TIMEOUT_MS: '300' },
    });
  });
  afterAll(() => t.close());

  const calls = (emulator: PlatformEmulator): number =>
    emulator.countRequests('GET /guilds/:guild_id');

  it('starts no emulator and says nothing of demo mode', () => {
    expect(t.app.get(PlatformConnection).emulator).toBeNull();
    expect(t.logs.text()).not.toContain('Demo mode');
  });

  it('serves no demo routes', async () => {
    const res = await t.http().get('/demo/oauth2-code').expect(404);
    expect(res.body.code).toBe('NotFound');
  });

  it('reaches the configured platform with the bot token', async () => {
    const before = calls(platform());
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.community}`).expect(200);
    expect(res.body).toEqual({ id: DEMO_IDS.community, name: 'Demo Community' });
    expect(calls(platform()) - before).toBe(1);
    expect(platform().requests.at(-1)?.auth).toBe('bot');
  });

  it('answers a guild the bot is not in with 404 NotFound', async () => {
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.sandbox}`).expect(404);
    expect(res.body).toEqual({
      message: `The bot is not in guild ${DEMO_IDS.sandbox}`,
      code: 'NotFound',
    });
  });

  it('answers a failing platform with 500 InternalError, never its body', async () => {
    faultsOf(platform()).inject('GET /guilds/:guild_id', { kind: 'error', status: 503 }, 10);
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.botLab}`).expect(500);
    expect(res.body).toEqual({
      message: 'The chat platform is unavailable; try again later',
      code: 'InternalError',
      error_id: expect.any(String),
    });
    expect(res.text).not.toContain('Server Error');
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('status 503 after 3 attempts');
  });

  it('answers a hung platform within the timeout, with 500 InternalError', async () => {
    faultsOf(platform()).inject('GET /guilds/:guild_id', { kind: 'hang', delayMs: 10_000 }, 10);
    const before = calls(platform());
    const res = await t.http().get('/__probe/platform/guilds/1100000000000000999').expect(500);
    expect(res.body.code).toBe('InternalError');
    // Every attempt was cut by the 300 ms timeout, long before the platform would have answered.
    expect(calls(platform()) - before).toBe(3);
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('timed out after 300 ms after 3 attempts');
  });
});

describe('with refused OAuth2 client credentials', () => {
  const platform = useEmulator();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        DISCORD_BOT_TOKEN: DEMO_SEED.application.bot_token,
        DISCORD_CLIENT_ID: DEMO_SEED.application.id,
        DISCORD_CLIENT_SECRET: 'not-the-secret',
        DISCORD_API_URL: platform().apiUrl,
      },
    });
  });
  afterAll(() => t.close());

  it('answers a login with 500 InternalError and logs it as a configuration problem', async () => {
    const redirect = 'http://localhost:3000/docs/oauth2-redirect.html';
    const code = platform().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: redirect });
    const res = await t.http().post('/oauth2').send({ code, redirect_uri: redirect }).expect(500);
    expect(res.body).toEqual({
      message: 'The chat platform is unavailable; try again later',
      code: 'InternalError',
      error_id: expect.any(String),
    });
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('client credentials were refused (invalid_client)');
    expect(t.logs.text()).not.toContain('not-the-secret');
  });
});
