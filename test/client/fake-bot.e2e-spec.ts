import { shardOfGuild } from 'clients/bot-reporter/src';
import { startFakeBot, type FakeBot } from 'clients/bot-reporter/src/fake-bot';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, emulatorOf, loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

/**
 * The fake bot against the demo, as docs/bot-developers.md runs it: the demo's own reporter off,
 * the fake bot plays the demo world's bot (read once from the emulator), and the service reads
 * what it reports: the feeds go live, a change it makes reaches a per-guild route with no platform
 * call, a report mangled on its way drifts and heals, and its shards close with it.
 */
describe('the fake bot against the demo', () => {
  const app = useTestApp({ env: { DEMO_BOT_REPORTER: 'false' } });
  const lines: string[] = [];
  let bot: FakeBot;
  let login: string;
  let token: string;

  beforeAll(async () => {
    login = (await loginAs(app(), DEMO_IDS.alice)).token;
    token = (await createApiToken(app(), login, { name: 'fake bot' })).token;
  });

  const internal = async (path: string): Promise<Record<string, unknown>> =>
    (await app().http().get(path).set('Authorization', `Bearer ${token}`).expect(200))
      .body as Record<string, unknown>;

  it('refuses to start with a token the internal routes refuse, saying what to fix', async () => {
    await expect(
      startFakeBot({
        baseUrl: `http://127.0.0.1:${app().port}`,
        // A login session's token: the internal routes take API tokens only.
        token: login,
        world: { guilds: 1 },
        log: (line) => lines.push(line),
      }),
    ).rejects.toThrow(/^GET \/internal\/bot-guilds: 403 Restricted: .*To fix: .*ROOT_USERS/);
  });

  it('reports the demo world whole: membership and guild state live, its shard Ready', async () => {
    // Before it starts, nothing reports: the demo's own bot is off.
    expect(await internal('/internal/bot-guilds')).toMatchObject({ live: false, guilds: 0 });
    bot = await startFakeBot({
      baseUrl: `http://127.0.0.1:${app().port}`,
      token,
      world: { platformUrl: emulatorOf(app()).apiUrl, botToken: 'demo-bot-token' },
      // Changes are made by the test, not by a timer.
      changeEveryMs: 3_600_000,
      log: (line) => lines.push(line),
    });
    expect(bot.guilds.map((guild) => guild.id).sort()).toEqual([
      DEMO_IDS.community,
      DEMO_IDS.botLab,
    ]);
    expect(await internal('/internal/bot-guilds')).toMatchObject({ live: true, guilds: 2 });
    expect(await internal('/internal/guild-state')).toMatchObject({
      membership_live: true,
      guilds: 2,
      live: 2,
    });
    const stats = await app().http().get('/bot-stats').expect(200);
    expect(stats.body).toMatchObject({
      shard_conns: { '0': { status: 'Ready', guilds: 2 } },
      total_guilds: 2,
    });
    expect(lines.join('\n')).toMatch(/feeds live: membership of 2 guilds/);
    expect(lines.join('\n')).not.toMatch(/warning/);
  });

  it('makes a change the per-guild routes read from its report, with no platform call', async () => {
    const emulator = emulatorOf(app());
    const calls = emulator.countRequests('GET /guilds/:guild_id');
    await bot.change();
    const created = /role "Fake role 1" \((\d+)\) created in Demo Community/.exec(lines.join('\n'));
    expect(created).not.toBeNull();
    const info = await app()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.community}`)
      .set('Authorization', `Bearer ${login}`)
      .expect(200);
    expect(info.body.roles).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: created![1], name: 'Fake role 1' })]),
    );
    expect(emulator.countRequests('GET /guilds/:guild_id')).toBe(calls);
  });

  it('heals a drift: a report mangled on its way is found by its hash and replaced whole', async () => {
    await bot.change();
    await bot.change();
    const said = lines.join('\n');
    expect(said).toMatch(/drift: the service's copy of Demo Community/);
    expect(said).toMatch(/healed: Demo Community \(1100000000000000100\) is live again/);
    expect(await internal('/internal/guild-state')).toMatchObject({ live: 2, guilds_behind: [] });
    const info = await app()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.community}`)
      .set('Authorization', `Bearer ${login}`)
      .expect(200);
    const names = (info.body.roles as { name: string }[]).map((role) => role.name);
    expect(names).toEqual(expect.arrayContaining(['Fake role 1', 'Fake role 3']));
    expect(names.filter((name) => name.includes('mangled'))).toEqual([]);
  });

  it('reports its shard Closed when it stops', async () => {
    await bot.stop();
    const stats = await app().http().get('/bot-stats').expect(200);
    expect(stats.body.shard_conns['0'].status).toBe('Closed');
  });
});

describe('the fake bot against a demo whose own bot reports', () => {
  const app = useTestApp();

  it('says it takes the demo bot’s shard over, and how to avoid it', async () => {
    const login = (await loginAs(app(), DEMO_IDS.alice)).token;
    const token = (await createApiToken(app(), login, { name: 'fake bot' })).token;
    const lines: string[] = [];
    const bot = await startFakeBot({
      baseUrl: `http://127.0.0.1:${app().port}`,
      token,
      world: { platformUrl: emulatorOf(app()).apiUrl, botToken: 'demo-bot-token' },
      changeEveryMs: 3_600_000,
      log: (line) => lines.push(line),
    });
    await bot.stop();
    expect(lines.join('\n')).toMatch(
      /warning: shard 0 was reported in the last 120 s by another process .*DEMO_BOT_REPORTER=false/,
    );
  });
});

describe('the fake bot with guilds of its own, over two shards', () => {
  const app = useTestApp({ env: { DEMO_BOT_REPORTER: 'false' } });

  it('makes them up on both shards, and the service holds them live', async () => {
    const login = (await loginAs(app(), DEMO_IDS.alice)).token;
    const token = (await createApiToken(app(), login, { name: 'fake bot' })).token;
    const bot = await startFakeBot({
      baseUrl: `http://127.0.0.1:${app().port}`,
      token,
      world: { guilds: 4 },
      shardCount: 2,
      changeEveryMs: 3_600_000,
      log: () => undefined,
    });
    const shards = new Set(bot.guilds.map((guild) => shardOfGuild(guild.id, 2)));
    expect(shards).toEqual(new Set([0, 1]));
    const guildState = await app()
      .http()
      .get('/internal/guild-state')
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(guildState.body).toMatchObject({ membership_live: true, guilds: 4, live: 4 });
    await bot.change();
    const stats = await app().http().get('/bot-stats').expect(200);
    expect(stats.body).toMatchObject({
      shard_conns: { '0': { status: 'Ready' }, '1': { status: 'Ready' } },
      total_guilds: 4,
    });
    await bot.stop();
  });
});
