import { request as httpRequest } from 'node:http';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { emulatorOf, loginAs } from 'test/support/auth';
import { faultsOf } from 'test/support/emulator-faults';
import { MetricsServer } from 'src/metrics/metrics.server';
import { openRawStream } from 'test/support/event-stream';
import { eventually } from 'test/support/eventually';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';

const TOKEN = 'metrics-'.repeat(5);

/** A scrape of the metrics listener: status, content type and body. */
function scrape(
  port: number,
  authorization?: string,
  path = '/metrics',
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, headers: authorization ? { authorization } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The value of one sample line, `name{labels} value`. */
function sample(body: string, line: string): number | undefined {
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('metrics (METRICS_PORT, METRICS_TOKEN)', () => {
  let metricsPort: number;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN },
    });
    metricsPort = t.app.get(MetricsServer).port!;
  });
  afterAll(() => t.close());

  it('serves /metrics on its own port only, to a scraper with the token', async () => {
    expect((await scrape(metricsPort)).status).toBe(401);
    expect((await scrape(metricsPort, `Bearer ${TOKEN}x`)).status).toBe(401);
    expect((await scrape(metricsPort, `Bearer ${TOKEN}`, '/other')).status).toBe(404);
    const ok = await scrape(metricsPort, `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    // Off the public API: the service's own port does not serve it.
    expect((await t.http().get('/metrics')).status).toBe(404);
  });

  it('counts requests by route template, method and status, never by path', async () => {
    const lines = {
      config:
        'bms_http_request_duration_seconds_count{method="GET",route="/config",status_code="200"}',
      settings:
        'bms_http_request_duration_seconds_count{method="GET",route="/guilds/:guild_id/settings",status_code="401"}',
      unmatched:
        'bms_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}',
    };
    const before = (await scrape(metricsPort, `Bearer ${TOKEN}`)).body;
    await t.http().get('/config').expect(200);
    await t.http().get('/config').expect(200);
    await t.http().get('/guilds/1100000000000000100/settings').expect(401);
    await t.http().get('/no/such/route/1100000000000000100').expect(404);
    const { body } = await scrape(metricsPort, `Bearer ${TOKEN}`);
    const added = (line: string): number => (sample(body, line) ?? 0) - (sample(before, line) ?? 0);
    expect(added(lines.config)).toBe(2);
    expect(added(lines.settings)).toBe(1);
    expect(added(lines.unmatched)).toBe(1);
    // No label holds an id: every label value is bounded.
    expect(body).not.toMatch(/="[^"]*\d{17,}[^"]*"/);
  });

  it('counts the open event streams by kind', async () => {
    const login = await loginAs(t, DEMO_IDS.alice);
    const guild = await openRawStream(t.port, `/guilds/${DEMO_IDS.community}/events`, {
      Authorization: `Bearer ${login.token}`,
    });
    const bots = [
      await openRawStream(t.port, '/bot-stats/events'),
      await openRawStream(t.port, '/bot-stats/events'),
    ];
    const open = async (): Promise<[number | undefined, number | undefined]> => {
      const { body } = await scrape(metricsPort, `Bearer ${TOKEN}`);
      return [
        sample(body, 'bms_event_streams_open{stream="guild"}'),
        sample(body, 'bms_event_streams_open{stream="bot"}'),
      ];
    };
    expect(await open()).toEqual([1, 2]);
    [guild, ...bots].forEach((stream) => stream.close());
    expect(await eventually(open, ([guilds, bot]) => guilds === 0 && bot === 0)).toEqual([0, 0]);
  });

  it('counts platform calls by route and outcome, cache lookups, the pool, Redis and the process', async () => {
    const login = await loginAs(t, DEMO_IDS.alice);
    await t
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    await t
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    const { body } = await scrape(metricsPort, `Bearer ${TOKEN}`);
    expect(
      sample(
        body,
        'bms_platform_request_duration_seconds_count{route="POST /oauth2/token",outcome="ok"}',
      ),
    ).toBeGreaterThanOrEqual(1);
    expect(body).toMatch(/^bms_cache_lookups_total\{cache="[a-z-]+",result="hit"\} [1-9]/m);
    expect(body).toMatch(/^bms_cache_lookups_total\{cache="[a-z-]+",result="miss"\} [1-9]/m);
    expect(sample(body, 'bms_platform_invalid_answers')).toBe(0);
    expect(sample(body, 'bms_platform_invalid_answers_limit')).toBe(9000);
    expect(sample(body, 'bms_platform_queue_waiting')).toBe(0);
    expect(sample(body, 'bms_platform_queue_refused')).toBe(0);
    // The platform answers: its breaker lets calls through.
    expect(sample(body, 'bms_platform_breaker_state{path="platform"}')).toBe(0);
    expect(sample(body, 'bms_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'bms_redis_up')).toBe(process.env.REDIS_URL ? 1 : 0);
    expect(body).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });
});

describe('metrics of what the service depends on: logins, the shared queues, the membership feed', () => {
  let metricsPort: number;
  let t: TestApp;
  const scraped = async (): Promise<string> => (await scrape(metricsPort, `Bearer ${TOKEN}`)).body;

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN } });
    metricsPort = t.app.get(MetricsServer).port!;
  });
  afterAll(() => t.close());

  it('counts logins by outcome, and how long calls waited for their turn in a shared queue', async () => {
    const before = await scraped();
    const count = (body: string, line: string): number => sample(body, line) ?? 0;
    await loginAs(t, DEMO_IDS.alice);
    const refused = await t.http().post('/oauth2').send({
      code: 'never-issued',
      redirect_uri: 'http://localhost:3000/docs/oauth2-redirect.html',
    });
    expect(refused.status).toBe(400);
    const after = await scraped();
    expect({
      ok:
        count(after, 'bms_logins_total{outcome="ok"}') -
        count(before, 'bms_logins_total{outcome="ok"}'),
      refused:
        count(after, 'bms_logins_total{outcome="refused"}') -
        count(before, 'bms_logins_total{outcome="refused"}'),
    }).toEqual({ ok: 1, refused: 1 });
    // Each exchange of a code waited its turn in the OAuth2 client's queue (at once, here).
    const waits =
      count(after, 'bms_platform_queue_wait_seconds_count') -
      count(before, 'bms_platform_queue_wait_seconds_count');
    expect(waits).toBeGreaterThanOrEqual(2);
    expect(count(after, 'bms_platform_queue_wait_seconds_bucket{le="10"}')).toBe(
      count(after, 'bms_platform_queue_wait_seconds_count'),
    );
  });

  it('counts a login the platform could not serve as platform_error', async () => {
    const before = await scraped();
    const count = (body: string, line: string): number => sample(body, line) ?? 0;
    const code = await t.http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.alice}`).expect(200);
    // Every attempt at the token exchange fails: the platform is unavailable.
    faultsOf(emulatorOf(t)).inject('POST /oauth2/token', { kind: 'error', status: 503 }, 10);
    try {
      const failed = await t
        .http()
        .post('/oauth2')
        .send({ code: code.body.code, redirect_uri: code.body.redirect_uri });
      expect(failed.status).toBe(500);
    } finally {
      faultsOf(emulatorOf(t)).clear();
    }
    const after = await scraped();
    const delta = (outcome: string): number =>
      count(after, `bms_logins_total{outcome="${outcome}"}`) -
      count(before, `bms_logins_total{outcome="${outcome}"}`);
    expect({ platform_error: delta('platform_error'), error: delta('error') }).toEqual({
      platform_error: 1,
      error: 0,
    });
  });

  it("says whether the bot's membership feed is live and how long ago each shard reported", async () => {
    // The demo bot reports its one shard at boot.
    const body = await eventually(
      scraped,
      (text) => sample(text, 'bms_membership_feed_live') === 1,
    );
    const age = sample(body, 'bms_membership_feed_report_age_seconds{shard="0"}');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(3600);
    expect(body).not.toMatch(/^bms_membership_feed_report_age_seconds\{shard="1"\}/m);
    expect(sample(body, 'bms_membership_feed_shards{snapshot="complete"}')).toBe(1);
    expect(sample(body, 'bms_membership_feed_shards{snapshot="incomplete"}')).toBe(0);
  });

  it("counts the membership feed's joins and leaves: applied, and ignored when older than what is held", async () => {
    const { token } = await loginAs(t, DEMO_IDS.alice);
    const apiToken = (
      await t
        .http()
        .post('/sessions')
        .set('Authorization', `Bearer ${token}`)
        .send({ name: 'bot', type: 'api', expiry: 3600 })
        .expect(201)
    ).body.token as string;
    const count = async (result: string): Promise<number> =>
      sample(await scraped(), `bms_membership_feed_events_total{result="${result}"}`) ?? 0;
    const [applied, ignored] = [await count('applied'), await count('ignored')];
    const guild = '1100000000000000999';
    const now = Date.now();
    const res = await t
      .http()
      .post('/internal/shards/0/guild-events')
      .set('Authorization', `Bearer ${apiToken}`)
      .send({
        events: [
          { type: 'join', guild_id: guild, at: new Date(now).toISOString() },
          // Far older than anything the feed remembers: ignored.
          { type: 'leave', guild_id: guild, at: new Date(now - 30 * 86_400_000).toISOString() },
        ],
      })
      .expect(200);
    expect(res.body).toEqual({ applied: 1, ignored: 1 });
    expect([await count('applied'), await count('ignored')]).toEqual([applied + 1, ignored + 1]);
  });
});

describe('metrics of platform failures', () => {
  let metricsPort: number;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0' } });
    metricsPort = t.app.get(MetricsServer).port!;
  });
  afterAll(() => t.close());

  it('counts a call refused for a long 429 as rate_limited, and 5xx answers as server_error', async () => {
    const faults = faultsOf(emulatorOf(t));
    faults.inject('GET /users/@me', { kind: 'rate_limit', retryAfter: 60 });
    const code = await t.http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.alice}`).expect(200);
    const refused = await t
      .http()
      .post('/oauth2')
      .send({ code: code.body.code, redirect_uri: code.body.redirect_uri });
    expect(refused.status).toBeGreaterThanOrEqual(500);
    faults.inject('GET /users/@me/guilds', { kind: 'error', status: 502 }, 10);
    const login = await loginAs(t, DEMO_IDS.alice);
    await t.http().get('/users/@me/guilds').set('Authorization', `Bearer ${login.token}`);
    faults.clear();
    const { body } = await scrape(metricsPort);
    expect(
      sample(
        body,
        'bms_platform_request_duration_seconds_count{route="GET /users/@me",outcome="rate_limited"}',
      ),
    ).toBe(1);
    expect(
      sample(
        body,
        'bms_platform_request_duration_seconds_count{route="GET /users/@me/guilds",outcome="server_error"}',
      ),
    ).toBe(1);
  });
});

describe('metrics off (no METRICS_PORT)', () => {
  const t = useTestApp();

  it('serves nothing and records nothing', async () => {
    await t().http().get('/config').expect(200);
    expect((await t().http().get('/metrics')).status).toBe(404);
  });
});
