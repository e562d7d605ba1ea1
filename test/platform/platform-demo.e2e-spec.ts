import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { PlatformConnection } from 'src/platform/platform-connection';
import { PlatformClient } from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

function emulatorOf(t: TestApp): PlatformEmulator {
  const emulator = t.app.get(PlatformConnection).emulator;
  if (!emulator) throw new Error('expected demo mode');
  return emulator;
}

describe('demo mode', () => {
  const t = useTestApp();

  it('starts the emulator and says so in one log line', () => {
    expect(emulatorOf(t()).apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    const lines = t()
      .logs.lines.map((line) => String(line.msg))
      .filter((msg) => msg.startsWith('Demo mode'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(emulatorOf(t()).apiUrl);
  });

  it('reaches the demo guild through the client', async () => {
    const lookup = await t().app.get(PlatformService).getGuild(DEMO_IDS.community);
    expect(lookup).toMatchObject({ found: true, value: { name: 'Demo Community' } });
  });

  describe('GET /demo/oauth2-code', () => {
    it('issues a code for the demo user that the platform exchanges once', async () => {
      const res = await t().http().get('/demo/oauth2-code').expect(200);
      expect(res.body).toEqual({
        code: expect.stringMatching(/^[\w-]{20}$/),
        redirect_uri: 'http://localhost:3000/docs/oauth2-redirect.html',
        user_id: DEMO_IDS.demoUser,
        expires_in: 600,
      });
      const client = t().app.get(PlatformClient);
      const grant = await client.exchangeCode(res.body.code, res.body.redirect_uri);
      expect((await client.getUser(grant.access_token)).id).toBe(DEMO_IDS.demoUser);
      await expect(client.exchangeCode(res.body.code, res.body.redirect_uri)).rejects.toMatchObject(
        {
          error: 'invalid_grant',
        },
      );
    });

    it('issues codes for other demo users', async () => {
      const res = await t().http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.carol}`).expect(200);
      expect(res.body.user_id).toBe(DEMO_IDS.carol);
    });

    it.each([
      ['an unknown user', '123', 404, 'NotFound'],
      ['a malformed id', 'abc', 400, 'BadRequest'],
      ['an id that is too long', '1'.repeat(21), 400, 'BadRequest'],
      // The one snowflake rule of every route: no leading zeros, at most 2^64 - 1.
      ['an id with a leading zero', '01100000000000000013', 400, 'BadRequest'],
      ['an id beyond 64 bits', '18446744073709551616', 400, 'BadRequest'],
    ])('refuses %s', async (_label, userId, status, code) => {
      const res = await t().http().get(`/demo/oauth2-code?user_id=${userId}`).expect(status);
      expect(res.body.code).toBe(code);
      if (status === 400) {
        expect(res.body.message).toBe(
          'Invalid request: user_id must be a snowflake (a decimal id of at most 20 digits)',
        );
      }
    });

    it('refuses unknown query parameters', async () => {
      const res = await t().http().get('/demo/oauth2-code?admin=1').expect(400);
      expect(res.body.code).toBe('BadRequest');
    });
  });
});

describe('cached platform lookups', () => {
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });

  it('coalesces ten concurrent requests for one guild into one platform call', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    const results = await Promise.all(
      Array.from({ length: 10 }, () => platform.getGuild(DEMO_IDS.botLab)),
    );
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
    for (const result of results) expect(result).toEqual(results[0]);
  });

  it('serves channels and members from the cache until the TTL expires', async () => {
    const platform = t().app.get(PlatformService);
    const emulator = emulatorOf(t());
    const count = (): number =>
      emulator.countRequests('GET /guilds/:guild_id/channels') +
      emulator.countRequests('GET /guilds/:guild_id/members/:user_id');
    const before = count();
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    expect(count() - before).toBe(2);

    await sleep(1_100);
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    expect(count() - before).toBe(4);
  });

  it('caches "not found" answers too', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    expect(await platform.getGuild(DEMO_IDS.sandbox)).toEqual({ found: false, missing: 'guild' });
    expect(await platform.getGuild(DEMO_IDS.sandbox)).toEqual({ found: false, missing: 'guild' });
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
  });

  it('does not cache failures', async () => {
    const platform = t().app.get(PlatformService);
    const emulator = emulatorOf(t());
    faultsOf(emulator).inject('GET /guilds/:guild_id', { kind: 'error', status: 500 }, 3);
    await expect(platform.getGuild('1100000000000000999')).rejects.toMatchObject({
      code: 'InternalError',
    });
    expect(await platform.getGuild('1100000000000000999')).toEqual({
      found: false,
      missing: 'guild',
    });
  });

  it("fetches the bot's own user once", async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /users/@me');
    const users = await Promise.all([
      platform.getBotUser(),
      platform.getBotUser(),
      platform.getBotUser(),
    ]);
    await sleep(1_100);
    await platform.getBotUser();
    expect(users[0].id).toBe(DEMO_IDS.bot);
    expect(emulatorOf(t()).countRequests('GET /users/@me') - before).toBe(1);
  });
});

describe('cached platform lookups with Redis unreachable', () => {
  // Nothing listens on port 1: every Redis command fails at once.
  const t = useTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });

  it('still answers, from the platform and the in-process cache', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    await expect(platform.getGuild(DEMO_IDS.community)).resolves.toMatchObject({ found: true });
    await expect(platform.getGuild(DEMO_IDS.community)).resolves.toMatchObject({ found: true });
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
  });
});
