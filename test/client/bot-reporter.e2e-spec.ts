import { createMembershipReporter, type MembershipReporter } from 'clients/bot-reporter/src';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { botAndAliceGuild, DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

const JOINED = '1100000000000000900';
const SEED: EmulatorSeed = {
  ...DEMO_SEED,
  guilds: [...DEMO_SEED.guilds, botAndAliceGuild(JOINED)],
};

/**
 * The bot's membership reporter (clients/bot-reporter), as a bot runs it against the service:
 * a snapshot, joins and leaves, and what the dashboard then sees.
 */
describe('the membership reporter (clients/bot-reporter)', () => {
  const platform = useEmulator(SEED);
  let app: TestApp;
  let login: string;
  let reporter: MembershipReporter;
  const errors: Error[] = [];

  beforeAll(async () => {
    app = await createTestApp({ env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice } });
    const code = platform().issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
    const res = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    login = res.body.token as string;
    const token = await app
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${login}`)
      .send({ name: 'bot', type: 'api', expiry: 3600 })
      .expect(201);
    reporter = createMembershipReporter({
      baseUrl: `http://127.0.0.1:${app.port}`,
      token: token.body.token as string,
      onError: (error) => errors.push(error),
    });
  });
  afterAll(async () => {
    await reporter.close();
    await app.close();
  });

  const botInGuilds = async (): Promise<string[]> => {
    const res = await app
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${login}`)
      .expect(200);
    return res.body.bot_in_guilds as string[];
  };

  it('makes the feed live with a snapshot, and carries joins and leaves', async () => {
    const progress = await reporter.snapshot(0, 1, [DEMO_IDS.community, DEMO_IDS.botLab]);
    expect(progress).toMatchObject({ shard_id: 0, received: 2, total: 2, complete: true });
    const status = await reporter.status();
    expect(status).toMatchObject({ live: true, shard_count: 1, guilds: 2 });
    // Of Alice's guilds, the bot is in Demo Community only (not in the one it joins below, yet).
    expect(await botInGuilds()).toEqual([DEMO_IDS.community]);

    reporter.joined(0, JOINED);
    reporter.left(0, DEMO_IDS.botLab);
    expect(reporter.pending()).toBe(2);
    await reporter.flush();
    expect(reporter.pending()).toBe(0);
    expect(await botInGuilds()).toEqual([DEMO_IDS.community, JOINED]);
    expect(await reporter.status()).toMatchObject({ live: true, guilds: 2 });
    expect(errors).toEqual([]);
  });
});
