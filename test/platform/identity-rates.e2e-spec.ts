import type { Response } from 'supertest';
import { DemoBotReporter } from 'src/bot-reports/demo-bot-reporter';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { emulatorOf, loginAs, loginOn, signInAsRoot } from 'test/support/auth';
import { faultsOf } from 'test/support/emulator-faults';
import { botAndAliceGuild, liveModeEnv } from 'test/support/platform';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { useTestApp, type TestApp } from 'test/support/test-app';

/** Accounts that flood cold guilds they belong to without holding any permission there. */
const ATTACKERS = [DEMO_IDS.demoUser, DEMO_IDS.bob, DEMO_IDS.carol, DEMO_IDS.dave];
/** Cold guilds each attacker asks for at once (each costs about five bot-token calls). */
const REQUESTS_PER_ATTACKER = 40;
/** The platform's global limit of the bot token. */
const BOT_PER_SECOND = 50;

/** Guild ids of the attack: 41 of them per attacker, none opened before. */
function guildIds(count: number, base: bigint): string[] {
  return Array.from({ length: count }, (_, i) => (base + BigInt(i)).toString());
}

/** Guilds the bot is in, owned by Alice, with every attacker a member (without roles). */
function addGuilds(emulator: PlatformEmulator, ids: readonly string[]): void {
  for (const id of ids) {
    const guild = botAndAliceGuild(id);
    for (const user of ATTACKERS) {
      guild.members.push({ user_id: user, roles: [], joined_at: '2024-01-01T00:00:00.000Z' });
    }
    emulator.state.addGuild(guild);
  }
}

/** The most bot-token calls the platform saw within any one second (every call, refused or not). */
function busiestSecond(requests: readonly EmulatedRequest[]): number {
  const times = requests.filter((r) => r.auth === 'bot').map((r) => r.at);
  let most = 0;
  for (const start of times) {
    most = Math.max(most, times.filter((at) => at >= start && at < start + 1_000).length);
  }
  return most;
}

/** Global 429s the platform answered the bot token. */
function global429s(requests: readonly EmulatedRequest[]): number {
  return requests.filter((r) => r.auth === 'bot' && r.status === 429 && r.scope === 'global')
    .length;
}

async function attack(
  t: TestApp,
  tokens: readonly string[],
  guilds: readonly string[][],
): Promise<Response[]> {
  return Promise.all(
    tokens.flatMap((token, i) =>
      guilds[i].map((guild) =>
        t
          .http()
          .get(`/guilds/${guild}/settings/revisions`)
          .set('Authorization', `Bearer ${token}`)
          .then((res) => res),
      ),
    ),
  );
}

/**
 * The bot token's global limit (50 calls a second) held for every path (docs/request-costs.md,
 * "Shared platform identities"): a few accounts, each within every per-user limit, flood cold
 * guilds they belong to without permission (each open costs the guild, its channels, threads and
 * the bot's and their members); the platform, counting as it does, never sees a second above 50,
 * the excess is refused with 429 and `Retry-After`, and a user opening a guild meanwhile is served.
 */
describe('a flood of cold guild opens by a few accounts', () => {
  const t = useTestApp({
    env: { GUILD_STATE_FEED: 'false', EMULATOR_RATE_LIMITS: 'true' },
  });
  const attacked = ATTACKERS.map((_, i) =>
    guildIds(REQUESTS_PER_ATTACKER, 1_500_000_000_000_000_000n + BigInt(i) * 1_000n),
  );
  const honest = guildIds(3, 1_600_000_000_000_000_000n);

  beforeAll(async () => {
    addGuilds(emulatorOf(t()), [...attacked.flat(), ...honest]);
    await t().app.get(DemoBotReporter).settled();
  });

  it('keeps the bot token within 50 calls a second at the platform, refusing the excess with 429', async () => {
    const tokens = await Promise.all(ATTACKERS.map(async (id) => (await loginAs(t(), id)).token));
    const alice = await loginAs(t(), DEMO_IDS.alice);
    const emulator = emulatorOf(t());
    const since = emulator.requests.length;

    const [answers, opened] = await Promise.all([
      attack(t(), tokens, attacked),
      Promise.all(
        honest.map((guild) =>
          t()
            .http()
            .get(`/users/@me/guilds/${guild}`)
            .set('Authorization', `Bearer ${alice.token}`)
            .then((res) => res),
        ),
      ),
    ]);

    const calls = emulator.requests.slice(since);
    expect(busiestSecond(calls)).toBeLessThanOrEqual(BOT_PER_SECOND);
    expect(global429s(calls)).toBe(0);
    // Every attacker request was answered: refused for want of permission once its guild was
    // loaded, or refused at once for want of room in the bot token's rate; never a 5xx.
    const statuses = new Set(answers.map((res) => res.status));
    expect([...statuses].every((status) => status === 403 || status === 429)).toBe(true);
    const refused = answers.filter((res) => res.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expect(res.body.code).toBe('RateLimited');
      expect(res.body.message).toMatch(/the bot token/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The guild owner, asking little, was served while the attack went on.
    expect(opened.map((res) => res.status)).toEqual([200, 200, 200]);
  });
});

/**
 * The same flood on two instances sharing one Redis, one database and one platform (CI's second
 * pass), each attacker's requests sent to the instances in turn: the bot token's rate is the
 * fleet's, not each instance's.
 */
describeShared('a flood of cold guild opens spread over two instances', () => {
  let platform: PlatformEmulator;
  const attacked = ATTACKERS.map((_, i) =>
    guildIds(REQUESTS_PER_ATTACKER, 1_800_000_000_000_000_000n + BigInt(i) * 1_000n),
  );
  beforeAll(async () => {
    platform = await PlatformEmulator.start(DEMO_SEED, {}, { rateLimits: {} });
    addGuilds(platform, attacked.flat());
  });
  afterAll(() => platform.close());
  const instances = useTwoInstances(() => ({
    ...liveModeEnv(platform),
    // One fleet: every instance's keys under one prefix.
    REDIS_KEY_PREFIX: `identity-rates-${Date.now()}:`,
    ROOT_USERS: DEMO_IDS.alice,
    GUILD_STATE_FEED: 'false',
  }));

  it('keeps the bot token within 50 calls a second at the platform for the fleet', async () => {
    const [a, b] = instances();
    // The bot reports where it is, as its shard's READY would.
    const root = await signInAsRoot(a, platform);
    const ids = platform.state.botGuildIds();
    await a
      .http()
      .put('/internal/shards/0/guilds')
      .set('Authorization', `Bearer ${root.bot}`)
      .send({
        shard_count: 1,
        snapshot_at: new Date().toISOString(),
        total: ids.length,
        guild_ids: ids,
      })
      .expect(200);
    const tokens = await Promise.all(ATTACKERS.map((id) => loginOn(a, platform, id)));
    const since = platform.requests.length;
    let turn = 0;
    const answers = await Promise.all(
      tokens.flatMap((token, i) =>
        attacked[i].map((guild) =>
          [a, b][turn++ % 2]
            .http()
            .get(`/guilds/${guild}/settings/revisions`)
            .set('Authorization', `Bearer ${token}`)
            .then((res) => res),
        ),
      ),
    );
    const calls = platform.requests.slice(since);
    expect(busiestSecond(calls)).toBeLessThanOrEqual(BOT_PER_SECOND);
    expect(global429s(calls)).toBe(0);
    expect(answers.every((res) => res.status === 403 || res.status === 429)).toBe(true);
    expect(answers.filter((res) => res.status === 429).length).toBeGreaterThan(0);
  });
});

/**
 * A request pays before it costs (docs/request-costs.md): every route that loads a guild from the
 * platform (its state not fed live, its answers not cached) counts against the user's one
 * `guild-load` budget first; once it is spent, the request is refused with 429 and no bot-token
 * call is made.
 */
describe('cold guild loads, charged to their user on every route', () => {
  const t = useTestApp({
    env: {
      GUILD_STATE_FEED: 'false',
      RATE_LIMITS_ENABLED: 'true',
      RATE_LIMIT_GUILD_LOAD: '3/60',
    },
  });
  const cold = guildIds(6, 1_700_000_000_000_000_000n);

  beforeAll(async () => {
    addGuilds(emulatorOf(t()), cold);
    await t().app.get(DemoBotReporter).settled();
  });

  it('refuses the fourth cold load of a minute with 429 naming the budget, before any bot-token call', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.bob);
    const emulator = emulatorOf(t());
    const botCalls = (since: number): number =>
      emulator.requests.slice(since).filter((r) => r.auth === 'bot').length;
    const get = (path: string): Promise<Response> =>
      Promise.resolve(t().http().get(path).set('Authorization', `Bearer ${token}`));

    // Three cold loads on three routes: a member without permission, then the guild's info.
    let since = emulator.requests.length;
    expect((await get(`/guilds/${cold[0]}/settings/revisions`)).status).toBe(403);
    expect((await get(`/guilds/${cold[1]}/settings/revisions`)).status).toBe(403);
    expect((await get(`/users/@me/guilds/${cold[2]}`)).status).toBe(200);
    expect(botCalls(since)).toBeGreaterThanOrEqual(12);
    // A guild already loaded costs no budget: it is answered again.
    expect((await get(`/guilds/${cold[0]}/settings/revisions`)).status).toBe(403);

    since = emulator.requests.length;
    for (const path of [`/guilds/${cold[3]}/settings/revisions`, `/users/@me/guilds/${cold[4]}`]) {
      const refused = await get(path);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        code: 'RateLimited',
        message: expect.stringMatching(/^Too many requests \(guild-load\); retry in \d+ seconds$/),
      });
      expect(refused.headers['x-ratelimit-bucket']).toBe('guild-load');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(botCalls(since)).toBe(0);
  });
});

/**
 * A guild whose state the feed holds costs no bot-token call, but the caller's own member in it
 * does when their login did not grant `guilds.members.read`: that lookup is the request's load,
 * charged to the same `guild-load` budget (once per request), so accounts asking one fed guild
 * after another cannot spend the bot token past their budget either.
 */
describe("a fed guild's member looked up with the bot token, charged to its user", () => {
  const t = useTestApp({
    env: { RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_GUILD_LOAD: '3/60', PLATFORM_CACHE_TTL: '1' },
  });
  const fed = guildIds(5, 1_720_000_000_000_000_000n);

  beforeAll(async () => {
    addGuilds(emulatorOf(t()), fed);
    await t().app.get(DemoBotReporter).settled();
  });

  it('refuses the fourth lookup of a minute with 429 naming the budget, before the bot-token call', async () => {
    const emulator = emulatorOf(t());
    // Without guilds.members.read: the member can only be asked with the bot's token.
    const token = await loginOn(t(), emulator, DEMO_IDS.bob, ['identify', 'guilds']);
    const botCalls = (since: number): string[] =>
      emulator.requests
        .slice(since)
        .filter((r) => r.auth === 'bot')
        .map((r) => r.route);
    const revisions = (guild: string): Promise<Response> =>
      Promise.resolve(
        t()
          .http()
          .get(`/guilds/${guild}/settings/revisions`)
          .set('Authorization', `Bearer ${token}`),
      );

    let since = emulator.requests.length;
    for (const guild of fed.slice(0, 3)) expect((await revisions(guild)).status).toBe(403);
    // The guilds came from the feed: only Bob's member was asked, once a guild.
    expect(botCalls(since)).toEqual(Array(3).fill('GET /guilds/:guild_id/members/:user_id'));

    since = emulator.requests.length;
    const refused = await revisions(fed[3]);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'RateLimited',
      message: expect.stringMatching(/^Too many requests \(guild-load\); retry in \d+ seconds$/),
    });
    expect(refused.headers['x-ratelimit-bucket']).toBe('guild-load');
    expect(botCalls(since)).toEqual([]);
  });
});

/**
 * A request the service can already refuse costs no bot-token call (docs/request-costs.md): a user
 * whose own guild list, as read with their token, does not hold the guild is not a member, and a
 * non-member holds nothing in it.
 */
describe('a cold guild asked by a user whose own guild list does not hold it', () => {
  const t = useTestApp({ env: { GUILD_STATE_FEED: 'false' } });
  beforeAll(() => t().app.get(DemoBotReporter).settled());

  it('is refused without a bot-token call, on the permission routes and the guild info alike', async () => {
    // The demo user is not in Bot Lab; the bot is.
    const { token } = await loginAs(t(), DEMO_IDS.demoUser);
    const emulator = emulatorOf(t());
    const get = (path: string): Promise<Response> =>
      Promise.resolve(t().http().get(path).set('Authorization', `Bearer ${token}`));
    const list = await get('/users/@me/guilds');
    expect(list.status).toBe(200);
    expect((list.body.guilds as { id: string }[]).map((g) => g.id)).not.toContain(DEMO_IDS.botLab);
    const since = emulator.requests.length;

    const revisions = await get(`/guilds/${DEMO_IDS.botLab}/settings/revisions`);
    expect(revisions.status).toBe(403);
    expect(revisions.body).toEqual({
      code: 'Restricted',
      message: 'You are not a member of this guild, so you hold none of its permissions',
    });
    const info = await get(`/users/@me/guilds/${DEMO_IDS.botLab}`);
    expect(info.status).toBe(404);
    expect(info.body).toEqual({ code: 'NotFound', message: 'You are not a member of this guild' });
    expect(emulator.requests.slice(since).filter((r) => r.auth === 'bot')).toEqual([]);
  });
});

/**
 * A guild list held from before may predate the user's joining the guild: it is read again with
 * their own token before they are refused, within their `guild-check` budget (docs/request-costs.md).
 */
describe("a cold guild its user's held guild list does not list", () => {
  const t = useTestApp({ env: { GUILD_STATE_FEED: 'false' } });
  beforeAll(() => t().app.get(DemoBotReporter).settled());

  it('serves a user who joined the guild after their list was read, reading it again with their own token', async () => {
    // Dave is not in Demo Community by the seed; his list is read and held first.
    const { token } = await loginAs(t(), DEMO_IDS.dave);
    const emulator = emulatorOf(t());
    const get = (path: string): Promise<Response> =>
      Promise.resolve(t().http().get(path).set('Authorization', `Bearer ${token}`));
    const list = await get('/users/@me/guilds');
    expect((list.body.guilds as { id: string }[]).map((g) => g.id)).not.toContain(
      DEMO_IDS.community,
    );
    emulator.state.addMember(DEMO_IDS.community, {
      user_id: DEMO_IDS.dave,
      roles: [],
      joined_at: new Date().toISOString(),
    });
    const since = emulator.requests.length;

    const info = await get(`/users/@me/guilds/${DEMO_IDS.community}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ name: 'Demo Community', user_roles: [] });
    const userListReads = emulator.requests
      .slice(since)
      .filter((r) => r.route === 'GET /users/@me/guilds' && r.auth === 'bearer');
    expect(userListReads).toHaveLength(1);
  });

  it('refuses a non-member asking again and again with no bot-token call and a bounded number of re-reads', async () => {
    // The demo user is not in Bot Lab: every ask re-reads the list until the budget is spent.
    const { token } = await loginAs(t(), DEMO_IDS.demoUser);
    const emulator = emulatorOf(t());
    const get = (path: string): Promise<Response> =>
      Promise.resolve(t().http().get(path).set('Authorization', `Bearer ${token}`));
    expect((await get('/users/@me/guilds')).status).toBe(200);
    const since = emulator.requests.length;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      statuses.push((await get(`/guilds/${DEMO_IDS.botLab}/settings/revisions`)).status);
    }
    // Refused every time as a non-member, never loaded: no bot-token call.
    expect(new Set(statuses)).toEqual(new Set([403]));
    const sent = emulator.requests.slice(since);
    expect(sent.filter((r) => r.auth === 'bot')).toEqual([]);
    // Re-reads with the user's own token stay within the budget's 30 (what the user's member
    // answered is held too, so usually one); then the list as held stands.
    const reads = sent.filter(
      (r) => r.route === 'GET /users/@me/guilds' && r.auth === 'bearer',
    ).length;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(30);
  });
});

/**
 * The invalid-request budget (docs/platform.md) is this service's own limit, kept so the platform
 * does not ban its address: once spent, a request that needs the platform is refused as a limit is,
 * 429 `RateLimited` naming the budget with `Retry-After`, not answered as a failure (500).
 */
describe('a request once the invalid-request budget is spent', () => {
  const t = useTestApp({
    env: { GUILD_STATE_FEED: 'false', PLATFORM_INVALID_REQUEST_LIMIT: '2' },
  });

  it('answers 429 RateLimited naming the budget, with Retry-After, and sends nothing', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.alice);
    const emulator = emulatorOf(t());
    faultsOf(emulator).inject('GET /guilds/:guild_id', { kind: 'error', status: 403 }, 2);
    // Two counted answers (the guild's read refused twice) spend the budget of 2.
    for (let i = 0; i < 2; i++) {
      await t()
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.community}`)
        .set('Authorization', `Bearer ${token}`);
    }
    expect(emulator.invalidAnswers()).toBeGreaterThanOrEqual(2);
    const since = emulator.requests.length;
    const res = await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      code: 'RateLimited',
      message: expect.stringContaining(
        "This service's budget of invalid requests to the chat platform",
      ),
    });
    expect(res.headers['retry-after']).toBe('10');
    expect(emulator.requests.slice(since).filter((r) => r.auth === 'bot')).toEqual([]);
  });
});
