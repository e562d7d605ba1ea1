import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Response, Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { RedisConnection } from 'src/common/redis/redis.module';
import { hashSessionToken } from 'src/sessions/session-token';
import { createApiToken, databaseOf, loginAs } from 'test/support/auth';
import { describeWithRedis, proxyRedis } from 'test/support/redis-proxy';
import type { TcpProxy } from 'test/support/tcp-proxy';
import { SINK_FIELDS } from 'test/support/demo-world';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';
import { describeShared, useTwoInstances } from 'test/support/two-instances';

/** Generous budgets for the buckets a test does not exercise, so logins never trip them. */
const ROOMY = {
  RATE_LIMITS_ENABLED: 'true',
  RATE_LIMIT_ANONYMOUS: '1000/60',
  RATE_LIMIT_AUTHENTICATED: '1000/60',
  RATE_LIMIT_OAUTH2: '1000/60',
  RATE_LIMIT_INVALID_TOKEN: '1000/60',
  RATE_LIMIT_GUILDS_REFRESH: '1000/60',
  RATE_LIMIT_GUILD_INFO: '1000/60',
};

/** Well-formed tokens that were never issued. */
const GUESS_LOGIN = `arl_${'A'.repeat(43)}`;
const GUESS_API = `ara_${'B'.repeat(43)}`;

function expectLimitHeaders(res: Response, bucket: string, limit: number, remaining: number): void {
  expect(res.headers['x-ratelimit-bucket']).toBe(bucket);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
}

function expectRefused(res: Response, bucket: string): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    message: expect.stringMatching(
      new RegExp(`^Too many requests \\(${bucket}\\); retry in \\d+ seconds$`),
    ),
    code: 'RateLimited',
  });
  expect(res.headers['x-ratelimit-bucket']).toBe(bucket);
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('rate limits: the anonymous bucket', () => {
  const t = useTestApp({ env: { ...ROOMY, RATE_LIMIT_ANONYMOUS: '3/2' } });

  it('counts unauthenticated requests per address, refuses past the limit and resets', async () => {
    for (let i = 2; i >= 0; i--) {
      expectLimitHeaders(await t().http().get('/config').expect(200), 'anonymous', 3, i);
    }
    expectRefused(await t().http().get('/bot-state'), 'anonymous');
    await sleep(2_100);
    expectLimitHeaders(await t().http().get('/config').expect(200), 'anonymous', 3, 2);
  });

  it('exempts the health probes', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await t().http().get('/healthz').expect(200);
      expect(res.headers['x-ratelimit-bucket']).toBeUndefined();
    }
  });

  it("does not spend a user's budget on an anonymous flood", async () => {
    await sleep(2_100);
    const login = await loginAs(t());
    while ((await t().http().get('/config')).status !== 429);
    const res = await t()
      .http()
      .get('/sessions/@me')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expectLimitHeaders(res, 'authenticated', 1000, 999);
  });
});

describe('rate limits: per user', () => {
  const t = useTestApp({ env: { ...ROOMY, RATE_LIMIT_AUTHENTICATED: '3/60' } });

  it('gives each user a budget of their own, whatever their address', async () => {
    const alice = await loginAs(t(), DEMO_IDS.alice);
    const bob = await loginAs(t(), DEMO_IDS.bob);
    const me = (token: string): Promise<Response> =>
      t().http().get('/sessions/@me').set('Authorization', token);
    for (let i = 2; i >= 0; i--) {
      expectLimitHeaders(await me(alice.token), 'authenticated', 3, i);
    }
    expectRefused(await me(alice.token), 'authenticated');
    // An API token of the same user draws on the same budget.
    expectLimitHeaders(await me(bob.token), 'authenticated', 3, 2);
    const bobApi = await createApiToken(t(), bob.token);
    expectLimitHeaders(await me(bobApi.token), 'authenticated', 3, 0);
    expectRefused(await me(bobApi.token), 'authenticated');
  });
});

describe('rate limits: route buckets', () => {
  const t = useTestApp({
    env: {
      ...ROOMY,
      RATE_LIMIT_OAUTH2: '2/60',
      RATE_LIMIT_GUILDS_REFRESH: '2/60',
      RATE_LIMIT_GUILD_INFO: '2/60',
    },
  });

  it('limits logins per address', async () => {
    await loginAs(t(), DEMO_IDS.carol);
    await loginAs(t(), DEMO_IDS.dave);
    const code = await t().http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.carol}`).expect(200);
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: code.body.code, redirect_uri: code.body.redirect_uri });
    expectRefused(res, 'oauth2');
  });
});

describe('rate limits: guild routes', () => {
  const t = useTestApp({
    env: {
      ...ROOMY,
      RATE_LIMIT_GUILDS_REFRESH: '2/60',
      RATE_LIMIT_GUILD_INFO: '2/60',
      RATE_LIMIT_SETTINGS_WRITE: '2/60',
    },
  });

  it('limits guild-list refreshes per user, and not the cached reads', async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const list = (token: string, query = ''): Promise<Response> =>
      t().http().get(`/users/@me/guilds${query}`).set('Authorization', `Bearer ${token}`);
    for (let i = 0; i < 3; i++) {
      expect((await list(login.token)).headers['x-ratelimit-bucket']).toBe('authenticated');
    }
    expectLimitHeaders(await list(login.token, '?refresh=true'), 'guilds-refresh', 2, 1);
    expectLimitHeaders(await list(login.token, '?refresh=true'), 'guilds-refresh', 2, 0);
    expectRefused(await list(login.token, '?refresh=true'), 'guilds-refresh');
    expect((await list(login.token)).status).toBe(200);
    const other = await loginAs(t(), DEMO_IDS.carol);
    expectLimitHeaders(await list(other.token, '?refresh=true'), 'guilds-refresh', 2, 1);
  });

  it('limits setting writes per user; a View is not a write', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    const post = (operation: string, fields: object): Promise<Response> =>
      t()
        .http()
        .post(`/guilds/${DEMO_IDS.community}/settings`)
        .set('Authorization', `Bearer ${login.token}`)
        .send({ setting: 'auditlog_sinks', operation, fields });
    for (let i = 0; i < 3; i++) {
      const view = await post('View', {});
      expect(view.status).toBe(200);
      expect(view.headers['x-ratelimit-bucket']).toBe('authenticated');
    }
    expectLimitHeaders(await post('Create', SINK_FIELDS), 'settings-write', 2, 1);
    expectLimitHeaders(await post('Create', SINK_FIELDS), 'settings-write', 2, 0);
    expectRefused(await post('Create', SINK_FIELDS), 'settings-write');
    expect((await post('View', {})).status).toBe(200);
    // Reading the schemas is not an operation.
    await t()
      .http()
      .get(`/guilds/${DEMO_IDS.community}/settings`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
  });

  it('limits guild lookups per user', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    const get = (): Promise<Response> =>
      t()
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.community}`)
        .set('Authorization', `Bearer ${login.token}`);
    expectLimitHeaders(await get(), 'guild-info', 2, 1);
    expectLimitHeaders(await get(), 'guild-info', 2, 0);
    expectRefused(await get(), 'guild-info');
  });
});

describe('rate limits: failed authentication', () => {
  const t = useTestApp({ env: { ...ROOMY, RATE_LIMIT_INVALID_TOKEN: '3/2' } });

  it('refuses unknown tokens from an address that keeps failing, without database work', async () => {
    const login = await loginAs(t());
    for (let i = 2; i >= 0; i--) {
      const res = await t()
        .http()
        .get('/sessions/@me')
        .set('Authorization', `Bearer arl_guess${i}`);
      expect(res.status).toBe(401);
      expectLimitHeaders(res, 'invalid-token', 3, i);
    }
    expectRefused(
      await t().http().get('/sessions/@me').set('Authorization', 'Bearer arl_guess'),
      'invalid-token',
    );
    // From now on a token never seen valid is refused before anything is looked up.
    const queries = jest.spyOn(databaseOf(t()), 'createQueryRunner');
    for (const authorization of [GUESS_LOGIN, GUESS_API, `Bearer ${GUESS_API}`, 'garbage', null]) {
      const request = t().http().get('/sessions/@me');
      if (authorization) void request.set('Authorization', authorization);
      expectRefused(await request, 'invalid-token');
    }
    expect(queries).not.toHaveBeenCalled();
    queries.mockRestore();
    // When the window ends, the address may fail again, within its budget.
    await sleep(2_100);
    await t().http().get('/sessions/@me').set('Authorization', GUESS_LOGIN).expect(401);
    await t().http().get('/sessions/@me').set('Authorization', `Bearer ${login.token}`).expect(200);
  });
});

describe('rate limits: failed authentication from a shared address', () => {
  const t = useTestApp({ env: { ...ROOMY, RATE_LIMIT_INVALID_TOKEN: '3/60' } });
  const me = (token: string): Test =>
    t().http().get('/sessions/@me').set('Authorization', `Bearer ${token}`);

  it("never refuses a valid token for someone else's failures, and still never answers a revoked one", async () => {
    const used = await loginAs(t(), DEMO_IDS.alice);
    await me(used.token).expect(200);
    const usedThenRevoked = await createApiToken(t(), used.token, { name: 'used' });
    await me(usedThenRevoked.token).expect(200);
    const neverUsedRevoked = await createApiToken(t(), used.token, { name: 'unused' });
    for (const token of [usedThenRevoked, neverUsedRevoked]) {
      await t()
        .http()
        .delete(`/sessions/${token.sessionId}`)
        .set('Authorization', `Bearer ${used.token}`)
        .expect(204);
    }

    // Someone else behind the same address guesses tokens until the address is refused.
    for (let i = 0; i < 3; i++) await me(`${GUESS_LOGIN.slice(0, -1)}${i}`).expect(401);
    expectRefused(await me(GUESS_LOGIN), 'invalid-token');

    // A valid token already in use, a fresh login and a fresh API token all pass.
    expect((await me(used.token).expect(200)).body.user_id).toBe(DEMO_IDS.alice);
    const fresh = await loginAs(t(), DEMO_IDS.bob);
    expect((await me(fresh.token).expect(200)).body.user_id).toBe(DEMO_IDS.bob);
    const freshApi = await createApiToken(t(), fresh.token);
    expect((await me(freshApi.token).expect(200)).body.type).toBe('api');

    // Unknown tokens are still refused, with no database work.
    const queries = jest.spyOn(databaseOf(t()), 'createQueryRunner');
    expectRefused(await me(GUESS_LOGIN), 'invalid-token');
    expectRefused(await me(GUESS_API), 'invalid-token');
    expect(queries).not.toHaveBeenCalled();

    // A revoked token is refused; once found revoked it costs no further lookups.
    for (const revoked of [usedThenRevoked, neverUsedRevoked]) {
      expectRefused(await me(revoked.token), 'invalid-token');
      queries.mockClear();
      expectRefused(await me(revoked.token), 'invalid-token');
      expect(queries).not.toHaveBeenCalled();
    }
    queries.mockRestore();
  });
});

describe('rate limits: failed authentication after a restart, without Redis', () => {
  let database: TestDatabase;
  let dataDir: string;
  let app: TestApp | undefined;
  // On PostgreSQL a database of the test's own; otherwise the embedded one in a data directory
  // that outlives the process using it, as in production.
  const start = async (): Promise<TestApp> =>
    createTestApp({
      database: { ...database, drop: () => Promise.resolve() },
      env: {
        ...ROOMY,
        RATE_LIMIT_INVALID_TOKEN: '3/60',
        REDIS_URL: undefined,
        ...(database.engine === 'pglite' ? { DATABASE_URL: undefined, DATA_DIR: dataDir } : {}),
      },
    });
  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'bms-restart-'));
  });
  afterAll(async () => {
    await app?.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets tokens issued before the restart through while the address is refused', async () => {
    app = await start();
    const login = await loginAs(app, DEMO_IDS.alice);
    // Issued, never used: nothing but the database knows it after the restart.
    const unusedApi = await createApiToken(app, login.token, { expiry: 30 * 86_400 });
    await app.close();

    app = await start();
    const t = app;
    const me = (token: string): Test =>
      t.http().get('/sessions/@me').set('Authorization', `Bearer ${token}`);
    for (let i = 0; i < 3; i++) await me(`${GUESS_API.slice(0, -1)}${i}`).expect(401);
    expectRefused(await me(GUESS_API), 'invalid-token');

    expect((await me(login.token).expect(200)).body.user_id).toBe(DEMO_IDS.alice);
    expect((await me(unusedApi.token).expect(200)).body).toMatchObject({
      id: unusedApi.sessionId,
      type: 'api',
    });
    const queries = jest.spyOn(databaseOf(t), 'createQueryRunner');
    expectRefused(await me(GUESS_LOGIN), 'invalid-token');
    expect(queries).not.toHaveBeenCalled();
    queries.mockRestore();
  });
});

describeWithRedis('rate limits: the shared marker of a token seen valid', () => {
  const t = useTestApp({ env: ROOMY });

  it('lives as long as the token can, not a day', async () => {
    const marker = async (token: string): Promise<number> => {
      const id = hashSessionToken(token).toString('hex').slice(0, 32);
      const client = t().app.get(RedisConnection).client;
      return (await client?.ttl(`${t().config.redisKeyPrefix}sessions:known:${id}`)) ?? -2;
    };
    const login = await loginAs(t());
    const api = await createApiToken(t(), login.token, { expiry: 30 * 86_400 });
    const week = t().config.sessions.loginSessionTtlSeconds;
    expect(await marker(login.token)).toBeGreaterThan(week - 3_600);
    expect(await marker(login.token)).toBeLessThanOrEqual(week);
    expect(await marker(api.token)).toBeGreaterThan(29 * 86_400);
    expect(await marker(api.token)).toBeLessThanOrEqual(30 * 86_400);
  });
});

describe('rate limits: client addresses', () => {
  const budget = { ...ROOMY, RATE_LIMIT_ANONYMOUS: '1/60' };

  describe('without TRUST_PROXY', () => {
    const t = useTestApp({ env: budget });

    it('ignores X-Forwarded-For, so it cannot be used to dodge the limit', async () => {
      await t().http().get('/config').set('X-Forwarded-For', '203.0.113.1').expect(200);
      expectRefused(
        await t().http().get('/config').set('X-Forwarded-For', '203.0.113.2'),
        'anonymous',
      );
    });
  });
});

// The test client connects from 127.0.0.1: it plays the one proxy in front of the service, which
// appends the address it saw to whatever X-Forwarded-For the client wrote.
describe.each([
  ['the proxy address', '127.0.0.1'],
  ['a hop count', '1'],
])('rate limits behind one trusted proxy (TRUST_PROXY as %s)', (_how, trustProxy) => {
  const t = useTestApp({
    env: {
      ...ROOMY,
      RATE_LIMIT_ANONYMOUS: '2/60',
      RATE_LIMIT_INVALID_TOKEN: '2/60',
      TRUST_PROXY: trustProxy,
    },
  });
  const anonymous = (forwardedFor: string): Test =>
    t().http().get('/config').set('X-Forwarded-For', forwardedFor);
  const badToken = (forwardedFor: string): Test =>
    t()
      .http()
      .get('/sessions/@me')
      .set('X-Forwarded-For', forwardedFor)
      .set('Authorization', 'Bearer arl_guess');

  it('counts the address the proxy saw, whatever the client wrote before it', async () => {
    const seen = '203.0.113.7';
    expectLimitHeaders(await anonymous(`10.0.0.1, ${seen}`), 'anonymous', 2, 1);
    expectLimitHeaders(await anonymous(`10.0.0.2, ${seen}`), 'anonymous', 2, 0);
    expectRefused(await anonymous(`10.0.0.3, ${seen}`), 'anonymous');
    expectRefused(await anonymous(seen), 'anonymous');

    expectLimitHeaders(await badToken(`10.0.0.1, ${seen}`), 'invalid-token', 2, 1);
    expectLimitHeaders(await badToken(`10.0.0.2, ${seen}`), 'invalid-token', 2, 0);
    expectRefused(await badToken(`10.0.0.3, 10.0.0.4, ${seen}`), 'invalid-token');
    expectRefused(await badToken(seen), 'invalid-token');
  });

  it("does not let a client spend another address's budget", async () => {
    const attacker = '203.0.113.8';
    const victim = '198.51.100.9';
    await anonymous(`${victim}, ${attacker}`).expect(200);
    await anonymous(`${victim}, ${attacker}`).expect(200);
    expectRefused(await anonymous(`${victim}, ${attacker}`), 'anonymous');
    await badToken(`${victim}, ${attacker}`).expect(401);
    await badToken(`${victim}, ${attacker}`).expect(401);
    expectRefused(await badToken(`${victim}, ${attacker}`), 'invalid-token');

    // The victim, through the same proxy, still has every budget whole.
    expectLimitHeaders(await anonymous(victim).expect(200), 'anonymous', 2, 1);
    expectLimitHeaders(await badToken(victim).expect(401), 'invalid-token', 2, 1);
  });
});

describe('rate limits behind one trusted proxy: IPv6 clients', () => {
  const t = useTestApp({
    env: {
      ...ROOMY,
      // Roomier than oauth2, which POST /oauth2 also counts in, so that it reports its own bucket.
      RATE_LIMIT_ANONYMOUS: '6/60',
      RATE_LIMIT_OAUTH2: '3/60',
      RATE_LIMIT_INVALID_TOKEN: '3/60',
      TRUST_PROXY: '127.0.0.1',
    },
  });
  const from = (seen: string): { anonymous: Test; oauth2: Test; badToken: Test } => ({
    anonymous: t().http().get('/config').set('X-Forwarded-For', seen),
    oauth2: t()
      .http()
      .post('/oauth2')
      .set('X-Forwarded-For', seen)
      .send({ code: 'not-a-code', redirect_uri: 'http://localhost/callback' }),
    badToken: t()
      .http()
      .get('/sessions/@me')
      .set('X-Forwarded-For', seen)
      .set('Authorization', 'Bearer arl_guess'),
  });

  // A client normally holds a whole /64: a fresh address per request must not buy a fresh budget.
  it.each(['anonymous', 'oauth2', 'badToken'] as const)(
    'counts every address of one /64 in one %s budget, and another /64 apart',
    async (kind) => {
      const bucket = kind === 'badToken' ? 'invalid-token' : kind;
      const prefix = { anonymous: '2001:db8:a', oauth2: '2001:db8:b', badToken: '2001:db8:c' }[
        kind
      ];
      const limit = kind === 'anonymous' ? 6 : 3;
      const seen = [`${prefix}:1::1`, `${prefix}:1::2`, `${prefix}:1:ffff:ffff:ffff:ffff`];
      while (seen.length < limit) seen.push(`${prefix}:1:0:0:0:${seen.length}`);
      for (const [i, address] of seen.entries()) {
        expectLimitHeaders(await from(address)[kind], bucket, limit, limit - 1 - i);
      }
      expectRefused(await from(`${prefix}:1:0:0:0:42`)[kind], bucket);
      expectRefused(await from(`${prefix.toUpperCase()}:1::abcd%eth0`)[kind], bucket);
      expectLimitHeaders(await from(`${prefix}:2::1`)[kind], bucket, limit, limit - 1);
    },
  );

  it('counts an IPv4-mapped IPv6 address as the IPv4 address it stands for', async () => {
    expectLimitHeaders(await from('198.51.100.20').badToken, 'invalid-token', 3, 2);
    expectLimitHeaders(await from('::ffff:198.51.100.20').badToken, 'invalid-token', 3, 1);
    expectLimitHeaders(await from('::FFFF:c633:6414').badToken, 'invalid-token', 3, 0);
    expectRefused(await from('0:0:0:0:0:ffff:198.51.100.20').badToken, 'invalid-token');
    expectRefused(await from('198.51.100.20').badToken, 'invalid-token');
    expectLimitHeaders(await from('198.51.100.21').badToken, 'invalid-token', 3, 2);
  });
});

describe('rate limits turned off', () => {
  const t = useTestApp({ env: { RATE_LIMITS_ENABLED: 'false', RATE_LIMIT_ANONYMOUS: '1/60' } });

  it('neither counts nor refuses', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t().http().get('/config').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

describeWithRedis('rate limits when Redis goes away', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    const redis = await proxyRedis();
    proxy = redis.proxy;
    t = await createTestApp({
      env: { ...ROOMY, RATE_LIMIT_ANONYMOUS: '2/60', REDIS_URL: redis.url },
    });
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  it('keeps serving without limits and reports Redis down', async () => {
    await t.http().get('/config').expect(200);
    proxy.cut();
    for (let i = 0; i < 5; i++) await t.http().get('/config').expect(200);
    const ready = await t.http().get('/readyz').expect(200);
    expect(ready.body.checks.redis).toBe('down');
    expect(t.logs.text()).toContain('Rate-limit counters unavailable');
    proxy.restore();
  });
});

describeShared('rate limits across two instances', () => {
  const instances = useTwoInstances({
    ...ROOMY,
    RATE_LIMIT_AUTHENTICATED: '4/60',
    REDIS_KEY_PREFIX: `rl-${Date.now()}:`,
  });

  it('shares one budget per user', async () => {
    const [first, second] = instances();
    const token = (await createApiToken(first, (await loginAs(first)).token)).token;
    // createApiToken used one request of the budget.
    const me = (app: TestApp): Promise<Response> =>
      app.http().get('/sessions/@me').set('Authorization', token);
    expectLimitHeaders(await me(first), 'authenticated', 4, 2);
    expectLimitHeaders(await me(second), 'authenticated', 4, 1);
    expectLimitHeaders(await me(first), 'authenticated', 4, 0);
    expectRefused(await me(second), 'authenticated');
  });
});

describeShared('failed authentication across two instances', () => {
  const instances = useTwoInstances({
    ...ROOMY,
    RATE_LIMIT_INVALID_TOKEN: '3/60',
    REDIS_KEY_PREFIX: `invalid-${Date.now()}:`,
  });

  it('lets a token issued on one instance through on another that refuses the address', async () => {
    const [first, second] = instances();
    const me = (app: TestApp, token: string): Test =>
      app.http().get('/sessions/@me').set('Authorization', token);
    for (let i = 0; i < 3; i++) await me(second, `${GUESS_API.slice(0, -1)}${i}`).expect(401);
    expectRefused(await me(second, GUESS_API), 'invalid-token');

    const fresh = await loginAs(first, DEMO_IDS.carol);
    expect((await me(second, fresh.token).expect(200)).body.user_id).toBe(DEMO_IDS.carol);
    expectRefused(await me(second, GUESS_LOGIN), 'invalid-token');
  });
});
