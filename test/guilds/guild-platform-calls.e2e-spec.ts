import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { emulatorOf, loginAs, loginOn } from 'test/support/auth';
import type { Test } from 'supertest';
import { DemoBotReporter } from 'src/bot-reports/demo-bot-reporter';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';
import { BucketQueues } from 'src/platform/bucket-queue';
import { eventually } from 'test/support/eventually';

/** Every platform call about one guild: what an invented id must never cost. */
function perGuildCalls(emulator: PlatformEmulator): number {
  return emulator.requests.filter((request) => request.route.startsWith('GET /guilds/:guild_id'))
    .length;
}

/** Guild ids a client may invent: random, next to real ones, the extremes, a real guild without the bot. */
function inventedIds(count: number): string[] {
  const fixed = [
    '1',
    '18446744073709551615',
    DEMO_IDS.sandbox,
    (BigInt(DEMO_IDS.community) + 1n).toString(),
    (BigInt(DEMO_IDS.botLab) - 1n).toString(),
  ];
  const random = Array.from({ length: count - fixed.length }, (_, i) =>
    (1_100_000_000_000_000_000n + BigInt(i) * 7_919n + 1_000_000n).toString(),
  );
  return [...fixed, ...random];
}

async function inBatches<T>(
  items: T[],
  size: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

/** Calls on the bot's own guild list, and whether any read more than one guild of it. */
function botListCalls(emulator: PlatformEmulator): { count: number; pages: number } {
  const calls = emulator.requests.filter(
    (request) => request.route === 'GET /users/@me/guilds' && request.auth === 'bot',
  );
  return {
    count: calls.length,
    pages: calls.filter((call) => !call.url.includes('limit=1&') && !call.url.endsWith('limit=1'))
      .length,
  };
}

/** 1,000 requests on invented guild ids, all answered 404 "The bot is not in this guild". */
async function requestInventedIds(app: TestApp, token: string): Promise<void> {
  const ids = inventedIds(500);
  const paths = ids.flatMap((id) => [`/guilds/${id}/settings`, `/users/@me/guilds/${id}`]);
  expect(paths).toHaveLength(1_000);
  const statuses = new Map<number, number>();
  // Ten at a time: one caller's share of a platform bucket the service shares (more is refused
  // with 429, see 'the bot's guild list, shared by every caller' below).
  await inBatches(paths, 10, async (path) => {
    const res = await app.http().get(path).set('Authorization', `Bearer ${token}`);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
  });
  expect(Object.fromEntries(statuses)).toEqual({ 404: 1_000 });
}

describe('guild requests for guilds the bot is not in, with the membership feed live', () => {
  const t = useTestApp();

  it('make no platform call at all, however many ids are invented', async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const emulator = emulatorOf(t());
    const before = emulator.requests.length;
    await requestInventedIds(t(), login.token);
    expect(emulator.requests.slice(before)).toEqual([]);
  });

  it('still serve a guild the bot is in', async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const get = (path: string): Test =>
      t().http().get(path).set('Authorization', `Bearer ${login.token}`);
    const info = await get(`/users/@me/guilds/${DEMO_IDS.community}`).expect(200);
    expect(info.body.name).toBe('Demo Community');
    const settings = await get(`/guilds/${DEMO_IDS.community}/settings`).expect(200);
    expect(Object.keys(settings.body)).toContain('permissions');
  });
});

describe('guild requests for guilds the bot is not in, without the membership feed', () => {
  const platform = useEmulator();
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({ env: liveModeEnv(platform()) });
  });
  afterAll(() => app.close());

  it('cost one single-guild read of the bot list each, never a page and nothing invalid', async () => {
    const code = platform().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
    const login = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    const before = botListCalls(platform());
    const perGuildBefore = perGuildCalls(platform());
    await requestInventedIds(app, login.body.token as string);
    // The bot list answers 200 whatever the id: no answer the platform counts as invalid.
    expect(perGuildCalls(platform()) - perGuildBefore).toBe(0);
    const after = botListCalls(platform());
    expect(after.count - before.count).toBeGreaterThan(0);
    // One call per id: the second route's request for an id is answered from the first's "not in".
    expect(after.count - before.count).toBeLessThanOrEqual(500);
    expect(after.pages - before.pages).toBe(0);
  });
});

describe("the bot's guild list, shared by every caller while the feed is not live", () => {
  const platform = useEmulator();
  let app: TestApp;
  /** Bot calls on its guild list wait for this while set. */
  let held: Promise<void> | null = null;
  let release = (): void => undefined;

  beforeAll(async () => {
    // The service's own per-user budgets off: what bounds the flood here is the platform bucket's queue.
    app = await createTestApp({
      env: { ...liveModeEnv(platform()), RATE_LIMITS_ENABLED: 'false' },
    });
    platform().intercept(async (route, reply) => {
      const isBot = reply.request.headers.authorization?.startsWith('Bot ') ?? false;
      if (route === 'GET /users/@me/guilds' && isBot && held) await held;
    });
  });
  afterAll(async () => {
    platform().intercept(null);
    await app.close();
  });

  // Logins without guilds.members.read: the bot token reads members, as in the findings.
  const signIn = (userId: string): Promise<string> =>
    loginOn(app, platform(), userId, ['identify', 'guilds']);
  const open = (token: string, guildId: string): Test =>
    app.http().get(`/users/@me/guilds/${guildId}`).set('Authorization', `Bearer ${token}`);

  it("refuses one caller's flood past its share at once while others wait for the bucket (429, Retry-After, the bucket named) and serves a caller who used the bucket less next", async () => {
    const [alice, bob, carol] = [
      await signIn(DEMO_IDS.alice),
      await signIn(DEMO_IDS.bob),
      await signIn(DEMO_IDS.carol),
    ];
    const invented = inventedIds(40).slice(5);
    // Alice has used the bucket before.
    for (const id of invented.slice(0, 2)) await open(alice, id).expect(404);
    const listCalls = (): string[] =>
      platform()
        .requests.filter((r) => r.route === 'GET /users/@me/guilds' && r.auth === 'bot')
        .map((r) => r.url);
    const before = listCalls().length;
    held = new Promise((resolve) => (release = resolve));
    // Bob's check runs (held) and his second waits: another caller waits for the bucket, so
    // Alice's share holds.
    const bobs = open(bob, invented[20]).then((res) => res);
    const queues = app.app.get(BucketQueues);
    await eventually(
      () => Promise.resolve(listCalls().length),
      (count) => count > before,
      10_000,
    );
    const bobsSecond = open(bob, invented[21]).then((res) => res);
    await eventually(
      () => Promise.resolve(queues.stats().waiting),
      (waiting) => waiting === 1,
      10_000,
    );
    // Her flood: 14 distinct ids at once. Ten wait, four are refused at once.
    const flood = invented.slice(2, 16).map((id) => open(alice, id).then((res) => res));
    await eventually(
      () => Promise.resolve(queues.stats().waiting),
      (waiting) => waiting === 11,
      10_000,
    );
    // Carol opens a guild the bot is in: her check waits behind the running call only.
    const carols = open(carol, DEMO_IDS.botLab).then((res) => res);
    await eventually(
      () => Promise.resolve(queues.stats().waiting),
      (waiting) => waiting === 12,
      10_000,
    );
    release();
    held = null;
    const answers = await Promise.all(flood);
    const refused = answers.filter((res) => res.status === 429);
    expect(answers.filter((res) => res.status === 404)).toHaveLength(10);
    expect(refused).toHaveLength(4);
    for (const res of refused) {
      expect(res.body).toEqual({
        code: 'RateLimited',
        message: expect.stringMatching(
          /rate limit for GET \/users\/@me\/guilds is shared by every user of this service and you already have 10 calls waiting for it; retry in \d+ seconds/,
        ),
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect((await carols).status).toBe(200);
    expect((await bobs).status).toBe(404);
    expect((await bobsSecond).status).toBe(404);
    // After the held call, Carol's check went first (it starts from her guild's id).
    const calls = listCalls().slice(before);
    expect(calls).toHaveLength(13);
    expect(calls[1]).toContain(`after=${BigInt(DEMO_IDS.botLab) - 1n}`);
  });

  it('answers an id it has just seen refused without a second call, whoever asks', async () => {
    const [alice, bob] = [await signIn(DEMO_IDS.alice), await signIn(DEMO_IDS.bob)];
    const id = inventedIds(60)[50];
    const calls = (): number => botListCalls(platform()).count;
    await open(alice, id).expect(404);
    const after = calls();
    await open(alice, id).expect(404);
    await open(bob, id).expect(404);
    await app
      .http()
      .get(`/guilds/${id}/settings`)
      .set('Authorization', `Bearer ${bob}`)
      .expect(404);
    expect(calls()).toBe(after);
  });
});

describe('a guild the bot has left, with the membership feed live', () => {
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });

  it('is refused as soon as the bot reports the leave, without a platform call', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    const emulator = emulatorOf(t());
    const get = (): Test =>
      t()
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
        .set('Authorization', `Bearer ${login.token}`);
    await get().expect(200);
    emulator.state.removeMember(DEMO_IDS.botLab, DEMO_IDS.bot);
    await t().app.get(DemoBotReporter).settled();
    const before = emulator.requests.length;
    const res = await get().expect(404);
    expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    expect(emulator.requests.slice(before)).toEqual([]);
  });
});

describe('a guild the bot has left, without the membership feed', () => {
  const platform = useEmulator();
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({ env: { ...liveModeEnv(platform()), PLATFORM_CACHE_TTL: '1' } });
  });
  afterAll(() => app.close());

  it('costs one round of guild lookups once its cached answers expire, and the refusal is kept', async () => {
    const code = platform().issueCode({ userId: DEMO_IDS.carol, redirectUri: DEMO_REDIRECT });
    const login = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    const get = (): Test =>
      app
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
        .set('Authorization', `Bearer ${login.body.token as string}`);
    await get().expect(200);
    platform().state.removeMember(DEMO_IDS.botLab, DEMO_IDS.bot);
    // Past PLATFORM_CACHE_TTL, so the found answers have expired.
    await sleep(1_100);
    const before = platform().requests.length;
    const res = await get().expect(404);
    expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    // One round of the guild's lookups, made together (each resource once), then nothing more.
    const round = platform()
      .requests.slice(before)
      .filter((request) => request.route.startsWith('GET /guilds/:guild_id'));
    expect(round.map((request) => request.route)).toContain('GET /guilds/:guild_id');
    expect(new Set(round.map((request) => request.url)).size).toBe(round.length);
    // From then on the guild costs no per-guild call: the refusal (a 403 the platform counts) is
    // remembered, and only the bot's list is read again.
    const perGuild = perGuildCalls(platform());
    await sleep(1_100);
    await get().expect(404);
    expect(perGuildCalls(platform())).toBe(perGuild);
  });
});

describe('membership checks without the feed, charged to their sender', () => {
  const platform = useEmulator();
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({
      env: {
        ...liveModeEnv(platform()),
        RATE_LIMITS_ENABLED: 'true',
        RATE_LIMIT_GUILD_CHECK: '3/60',
      },
    });
  });
  afterAll(() => app.close());

  it('refuse a user past their guild-check budget with 429, and only that user', async () => {
    // Logins without guilds.members.read: members are read with the bot's token, whose refusal
    // ("no such guild") is what tells the service the bot left.
    const signIn = async (userId: string): Promise<string> => {
      const code = platform().issueCode({
        userId,
        scopes: ['identify', 'guilds'],
        redirectUri: DEMO_REDIRECT,
      });
      const res = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
      return res.body.token as string;
    };
    const [alice, carol] = [await signIn(DEMO_IDS.alice), await signIn(DEMO_IDS.carol)];
    const open = (token: string, guildId: string): Test =>
      app.http().get(`/guilds/${guildId}/settings`).set('Authorization', `Bearer ${token}`);
    const invented = inventedIds(10).slice(5);
    for (const id of invented.slice(0, 3)) await open(alice, id).expect(404);
    const before = botListCalls(platform()).count;
    const refused = await open(alice, invented[3]).expect(429);
    expect(refused.body).toEqual({
      message: expect.stringContaining('Too many requests (guild-check)'),
      code: 'RateLimited',
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-bucket']).toBe('guild-check');
    // The refusal cost the platform nothing; another user still has a budget of their own.
    expect(botListCalls(platform()).count).toBe(before);
    await open(carol, invented[3]).expect(404);
    // A guild the bot is in, once learned, costs no check at all.
    await open(carol, DEMO_IDS.botLab).expect(200);
    for (let i = 0; i < 5; i++) await open(carol, DEMO_IDS.botLab).expect(200);
  });
});

describe('a guild the bot has left while its answers are held', () => {
  const platform = useEmulator();
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({ env: { ...liveModeEnv(platform()), PLATFORM_CACHE_TTL: '30' } });
  });
  afterAll(() => app.close());

  it('costs one refused member lookup and its retry, then none, however often it is asked', async () => {
    // Logins without guilds.members.read: members are read with the bot's token, whose refusal
    // ("no such guild") is what tells the service the bot left.
    const signIn = async (userId: string): Promise<string> => {
      const code = platform().issueCode({
        userId,
        scopes: ['identify', 'guilds'],
        redirectUri: DEMO_REDIRECT,
      });
      const res = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
      return res.body.token as string;
    };
    const open = (token: string): Test =>
      app
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
        .set('Authorization', `Bearer ${token}`);
    const [carol, alice] = [await signIn(DEMO_IDS.carol), await signIn(DEMO_IDS.alice)];
    // The guild's answers are held (for 30 s), then the bot is removed.
    await open(carol).expect(200);
    platform().state.removeMember(DEMO_IDS.botLab, DEMO_IDS.bot);
    const memberLookups = (): number =>
      platform().countRequests('GET /guilds/:guild_id/members/:user_id');
    const before = memberLookups();
    for (let i = 0; i < 20; i++) {
      const res = await open(alice).expect(404);
      expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    }
    // Alice's member: asked, refused ("no such guild"), asked again, refused: then nothing more.
    expect(memberLookups() - before).toBe(2);
    await open(carol).expect(404);
  });
});
