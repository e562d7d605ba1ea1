import type request from 'supertest';
import {
  createShardStatsReporter,
  type ShardStats,
} from 'clients/bot-reporter/src/shard-stats-reporter';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { describeShared, useTwoInstances } from 'test/support/two-instances';

const ROOT = DEMO_IDS.demoUser;
const REPORT = {
  status: 'Ready',
  real_latency: 42,
  guilds: 1200,
  users: 50_000,
  uptime: 3600,
  total_uptime: 86_400,
};

function put(
  t: TestApp,
  shardId: string | number,
  authorization: string | null,
  body: unknown,
): request.Test {
  const req = t.http().put(`/internal/shards/${shardId}`);
  if (authorization !== null) void req.set('Authorization', authorization);
  return req.send(body as object);
}

describe('PUT /internal/shards/{shard_id}', () => {
  const t = useTestApp({ env: { ROOT_USERS: `${ROOT},1100000000000000999` } });
  let rootLogin: TestLogin;
  let rootToken: string;

  beforeAll(async () => {
    rootLogin = await loginAs(t(), ROOT);
    rootToken = (await createApiToken(t(), rootLogin.token, { name: 'shard reporter' })).token;
  });

  it('stores the report of a root user holding an API token (both header forms)', async () => {
    const res = await put(t(), 0, rootToken, REPORT).expect(200);
    expect(res.body).toEqual({
      shard_id: 0,
      ...REPORT,
      reported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    await put(t(), 1, `Bearer ${rootToken}`, { ...REPORT, real_latency: null }).expect(200);
    const rows = await databaseOf(t()).query(
      'SELECT shard_id, status, latency_ms, guilds, users, uptime_s, total_uptime_s FROM shard_status ORDER BY shard_id',
    );
    expect(rows).toEqual([
      {
        shard_id: 0,
        status: 'Ready',
        latency_ms: 42,
        guilds: '1200',
        users: '50000',
        uptime_s: '3600',
        total_uptime_s: '86400',
      },
      expect.objectContaining({ shard_id: 1, latency_ms: null }),
    ]);
  });

  it('replaces the previous report of the shard', async () => {
    await put(t(), 5, rootToken, REPORT).expect(200);
    await put(t(), 5, rootToken, { ...REPORT, status: 'Reconnecting', guilds: 7 }).expect(200);
    const rows = await databaseOf(t()).query<{ status: string; guilds: string }[]>(
      'SELECT status, guilds FROM shard_status WHERE shard_id = 5',
    );
    expect(rows).toEqual([{ status: 'Reconnecting', guilds: '7' }]);
  });

  it('refuses a request without a token', async () => {
    const res = await put(t(), 0, null, REPORT).expect(401);
    expect(res.body.code).toBe('NoAuthToken');
  });

  it('refuses the API token of a user who is not a root user', async () => {
    const other = await loginAs(t(), DEMO_IDS.carol);
    const token = (await createApiToken(t(), other.token)).token;
    const res = await put(t(), 0, token, REPORT).expect(403);
    expect(res.body).toEqual({
      message: "Only the bot's operators (ROOT_USERS) may use internal routes",
      code: 'Restricted',
    });
  });

  it("refuses a root user's login session: shards report with API tokens", async () => {
    const res = await put(t(), 0, `Bearer ${rootLogin.token}`, REPORT).expect(403);
    expect(res.body).toEqual({
      message: 'Login sessions cannot use this route; it needs an API token',
      code: 'Restricted',
    });
  });

  it.each(['abc', '-1', '1.5', '007', '1e3', '65536', '99999999999', ' 1'])(
    'answers 400 for the shard id %j',
    async (shardId) => {
      const res = await put(t(), encodeURIComponent(shardId), rootToken, REPORT).expect(400);
      expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field: 'shard_id' }] });
    },
  );

  it.each([
    ['status', { status: 'Unknown' }],
    ['status', { status: 'ready' }],
    ['status', { status: 3 }],
    ['status', { status: undefined }],
    ['real_latency', { real_latency: -1 }],
    ['real_latency', { real_latency: 1.5 }],
    ['real_latency', { real_latency: '42' }],
    ['real_latency', { real_latency: undefined }],
    ['real_latency', { real_latency: 2 ** 31 }],
    ['guilds', { guilds: -1 }],
    ['guilds', { guilds: '1200' }],
    ['guilds', { guilds: null }],
    ['guilds', { guilds: 2 ** 53 }],
    ['users', { users: 0.5 }],
    ['users', { users: undefined }],
    ['uptime', { uptime: true }],
    ['uptime', { uptime: -5 }],
    ['total_uptime', { total_uptime: [1] }],
    ['total_uptime', { total_uptime: {} }],
    ['uptime', { uptime: 100, total_uptime: 99 }],
    ['shard', { shard: 0 }],
  ])('answers 400 naming %s for a bad body', async (field, change) => {
    const before = await databaseOf(t()).query('SELECT count(*)::int AS n FROM shard_status');
    const res = await put(t(), 9, rootToken, { ...REPORT, ...change }).expect(400);
    expect(res.body.code).toBe('BadRequest');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await databaseOf(t()).query('SELECT count(*)::int AS n FROM shard_status')).toEqual(
      before,
    );
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"Ready"'],
    ['null', 'null'],
  ])('answers 400 for %s as the body', async (_name, body) => {
    const res = await t()
      .http()
      .put('/internal/shards/9')
      .set('Authorization', rootToken)
      .set('Content-Type', 'application/json')
      .send(body)
      .expect(400);
    expect(res.body.code).toBe('BadRequest');
  });
});

describe('GET /bot-stats', () => {
  const t = useTestApp({ env: { ROOT_USERS: ROOT } });
  let token: string;

  beforeAll(async () => {
    token = (await createApiToken(t(), (await loginAs(t(), ROOT)).token)).token;
  });

  it('answers zeros before any shard reported, without a token', async () => {
    const res = await t().http().get('/bot-stats').expect(200);
    expect(res.body).toEqual({ shard_conns: {}, total_guilds: 0, total_users: 0 });
  });

  it('keys shards by id and sums guilds and users', async () => {
    await put(t(), 0, token, REPORT).expect(200);
    await put(t(), 1, token, { ...REPORT, guilds: 800, users: 20_000, real_latency: null }).expect(
      200,
    );
    const res = await t().http().get('/bot-stats').expect(200);
    expect(res.body).toEqual({
      shard_conns: {
        '0': {
          status: 'Ready',
          real_latency: 42,
          guilds: 1200,
          uptime: 3600,
          total_uptime: 86_400,
        },
        '1': { status: 'Ready', real_latency: -1, guilds: 800, uptime: 3600, total_uptime: 86_400 },
      },
      total_guilds: 2000,
      total_users: 70_000,
    });
  });

  it('reports a shard silent for over 2 minutes as Unknown', async () => {
    await databaseOf(t()).query(
      `UPDATE shard_status SET reported_at = now() - interval '121 seconds' WHERE shard_id = 1`,
    );
    // A report clears the cached summary.
    await put(t(), 0, token, REPORT).expect(200);
    const res = await t().http().get('/bot-stats').expect(200);
    expect(res.body.shard_conns['0'].status).toBe('Ready');
    expect(res.body.shard_conns['1'].status).toBe('Unknown');
    expect(res.body.total_guilds).toBe(2000);
  });

  it('serves the summary from its cache until a shard reports', async () => {
    await t().http().get('/bot-stats').expect(200);
    await databaseOf(t()).query('UPDATE shard_status SET guilds = 1 WHERE shard_id = 0');
    const cached = await t().http().get('/bot-stats').expect(200);
    expect(cached.body.shard_conns['0'].guilds).toBe(1200);
    await put(t(), 0, token, { ...REPORT, guilds: 5 }).expect(200);
    const fresh = await t().http().get('/bot-stats').expect(200);
    expect(fresh.body.shard_conns['0'].guilds).toBe(5);
  });

  it('answers every read while reports keep clearing the summary under way', async () => {
    const traffic = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0 ? put(t(), i % 3, token, { ...REPORT, guilds: i }) : t().http().get('/bot-stats'),
    );
    const answers = await Promise.all(traffic);
    expect(answers.map((res) => res.status)).toEqual(Array(40).fill(200));
  });
});

describe("the reporter package's shard stats reporter", () => {
  const t = useTestApp({ env: { ROOT_USERS: ROOT } });

  it('reports the shards it is given with a root API token, and Closed when it closes', async () => {
    const token = (await createApiToken(t(), (await loginAs(t(), ROOT)).token)).token;
    const shard = (id: number, guilds: number): { id: number } & ShardStats => ({
      id,
      status: 'Ready',
      real_latency: 40 + id,
      guilds,
      users: guilds * 10,
      uptime: 60,
      total_uptime: 600,
    });
    const errors: unknown[] = [];
    const reporter = createShardStatsReporter({
      baseUrl: url(t()),
      token,
      shards: () => [shard(0, 1200), shard(1, 1240)],
      intervalMs: 3_600_000,
      onError: (error) => errors.push(error),
    });
    await reporter.report();
    const stats = await t().http().get('/bot-stats').expect(200);
    expect(Object.keys(stats.body.shard_conns)).toEqual(['0', '1']);
    expect(stats.body.total_guilds).toBe(2440);
    expect(stats.body.shard_conns['1']).toMatchObject({ status: 'Ready', guilds: 1240 });

    await reporter.close();
    const closed = await t().http().get('/bot-stats').expect(200);
    expect(closed.body.shard_conns['0'].status).toBe('Closed');
    expect(closed.body.shard_conns['1'].status).toBe('Closed');
    expect(errors).toEqual([]);
  });
});

function url(t: TestApp): string {
  return `http://127.0.0.1:${t.port}`;
}

describeShared('GET /bot-stats across instances', () => {
  const instances = useTwoInstances({ REDIS_KEY_PREFIX: `stats-${Date.now()}:`, ROOT_USERS: ROOT });

  it('shares the cached summary and its invalidation', async () => {
    const [first, second] = instances();
    const token = (await createApiToken(first, (await loginAs(first, ROOT)).token)).token;
    await put(first, 0, token, REPORT).expect(200);
    expect((await first.http().get('/bot-stats').expect(200)).body.total_guilds).toBe(1200);
    await databaseOf(first).query('UPDATE shard_status SET guilds = 1');
    // The second instance answers from the summary the first one cached.
    expect((await second.http().get('/bot-stats').expect(200)).body.total_guilds).toBe(1200);
    // A report on the first instance clears it for the second.
    await put(first, 0, token, { ...REPORT, guilds: 9 }).expect(200);
    expect((await second.http().get('/bot-stats').expect(200)).body.total_guilds).toBe(9);
  });
});
