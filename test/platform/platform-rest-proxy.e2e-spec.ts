import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { MetricsServer } from 'src/metrics/metrics.server';
import { PlatformService } from 'src/platform/platform.service';
import { PlatformProbeController } from 'test/fixtures/platform-probe.controller';
import { loginOn } from 'test/support/auth';
import { faultsOf } from 'test/support/emulator-faults';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { unusedPort } from 'test/support/ports';
import { type ProxiedRequest, type RestProxy, startRestProxy } from 'test/support/rest-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';

const GUILD_ROUTE = 'GET /guilds/:guild_id';
const UNAVAILABLE = {
  message: 'The chat platform is unavailable; try again later',
  code: 'InternalError',
  error_id: expect.any(String),
};

/** Guild ids nobody has looked up yet (a lookup is cached), answered 404 by the platform. */
let unknownGuilds = 1_100_000_000_000_000_900n;
const unknownGuild = (): string => String((unknownGuilds += 1n));

/** The value of one sample of the metrics (0 when absent). */
async function sample(port: number, line: string): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

const INVALID_ANSWERS = 'bms_platform_invalid_answers';

const platformCalls = (route: string, outcome: string): string =>
  `bms_platform_request_duration_seconds_count{route="${route}",outcome="${outcome}"}`;

/** The URLs of requests, sorted: the proxy's and the platform's logs compare as multisets. */
const sortedUrls = (requests: { url: string }[]): string[] => requests.map((r) => r.url).sort();

/**
 * With DISCORD_REST_PROXY_URL, the bot's calls go through the REST proxy (the real
 * `@discordjs/proxy`, in front of an emulator standing in for the platform); the OAuth2 client's
 * and users' calls go straight to DISCORD_API_URL.
 */
describe('with a REST proxy (DISCORD_REST_PROXY_URL)', () => {
  const platform = useEmulator();
  let proxy: RestProxy;
  let t: TestApp;
  let metricsPort: number;

  beforeAll(async () => {
    proxy = await startRestProxy(platform());
    t = await createTestApp({
      controllers: [PlatformProbeController],
      env: { ...liveModeEnv(platform()), DISCORD_REST_PROXY_URL: proxy.url, METRICS_PORT: '0' },
    });
    metricsPort = t.app.get(MetricsServer).port!;
    // The bot's own user is read at start: done before any test watches the logs.
    await t.app.get(PlatformService).getBotUser();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  /** What the proxy and the platform receive from now on. */
  function watch(): { proxied: () => ProxiedRequest[]; seen: () => EmulatedRequest[] } {
    const proxyMark = proxy.requests.length;
    const platformMark = platform().requests.length;
    return {
      proxied: () => proxy.requests.slice(proxyMark),
      seen: () => platform().requests.slice(platformMark),
    };
  }

  /** Every call with the bot token went through the proxy, once, and nothing else did. */
  function expectSharedCallsProxied(proxied: ProxiedRequest[], seen: EmulatedRequest[]): void {
    const bot = seen.filter((r) => r.auth === 'bot');
    expect(sortedUrls(proxied)).toEqual(sortedUrls(bot));
    expect(new Set(proxied.map((r) => r.scheme))).toEqual(new Set(proxied.length ? ['Bot'] : []));
  }

  it('logs in straight with the platform: the code exchange and the user are no calls of the bot', async () => {
    const { proxied, seen } = watch();
    const token = await loginOn(t, platform());
    const guilds = await t
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    const listed = (guilds.body as { guilds: { id: string }[] }).guilds.map((g) => g.id);
    expect(listed).toContain(DEMO_IDS.community);

    expect(proxied().filter((r) => r.scheme !== 'Bot')).toEqual([]);
    expect(seen().filter((r) => r.route === 'POST /oauth2/token')).toHaveLength(1);
    const bearer = seen().filter((r) => r.auth === 'bearer');
    expect(bearer.map((r) => r.route)).toEqual(['GET /users/@me', 'GET /users/@me/guilds']);
    expectSharedCallsProxied(proxied(), seen());
  });

  it("opens a guild with the bot's calls through the proxy", async () => {
    const token = await loginOn(t, platform());
    const { proxied, seen } = watch();
    const res = await t
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.community}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(res.body.name).toBe('Demo Community');

    const botRoutes = seen()
      .filter((r) => r.auth === 'bot')
      .map((r) => r.route);
    expect(botRoutes).toEqual(
      expect.arrayContaining([GUILD_ROUTE, 'GET /guilds/:guild_id/members/:user_id']),
    );
    expect(proxied().every((r) => r.scheme === 'Bot' && r.status === 200)).toBe(true);
    expectSharedCallsProxied(proxied(), seen());
  });

  it("waits out the proxy's 429 (the platform's limit, relayed with Retry-After only), then answers", async () => {
    const okBefore = await sample(metricsPort, platformCalls(GUILD_ROUTE, 'ok'));
    const invalidBefore = await sample(metricsPort, INVALID_ANSWERS);
    const platformCounted = platform().invalidAnswers();
    const { proxied, seen } = watch();
    faultsOf(platform()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0.4 });
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.botLab}`).expect(200);
    expect(res.body).toEqual({ id: DEMO_IDS.botLab, name: 'Bot Lab' });

    const [limited, ...later] = proxied();
    // The proxy's own limiter turned the platform's 429 into its answer: Retry-After, nothing else.
    expect(limited).toMatchObject({ status: 429, rateLimitHeaders: false });
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(0.4);
    expect(later.at(-1)?.status).toBe(200);
    for (const retry of later) expect(retry.at - limited.at).toBeGreaterThanOrEqual(400);
    expect(seen().filter((r) => r.route === GUILD_ROUTE)).toHaveLength(2);
    // The call is counted once, however many attempts it took. The platform counted its 429; the
    // service cannot tell it from the proxy's own refusals, and counts no proxy 429.
    expect(await sample(metricsPort, platformCalls(GUILD_ROUTE, 'ok'))).toBe(okBefore + 1);
    expect(platform().invalidAnswers()).toBe(platformCounted + 1);
    expect(await sample(metricsPort, INVALID_ANSWERS)).toBe(invalidBefore);
  });

  it.each([
    ['Retry-After: 0', '0'],
    ['no Retry-After', null],
    ['an unreadable Retry-After', 'soon'],
  ])('backs off on a proxy 429 with %s instead of retrying at once', async (_, retryAfter) => {
    const { proxied } = watch();
    proxy.refuse(2, retryAfter);
    const guild = unknownGuild();
    const res = await t.http().get(`/__probe/platform/guilds/${guild}`).expect(404);
    expect(res.body).toEqual({ message: `The bot is not in guild ${guild}`, code: 'NotFound' });

    const [first, second, third, ...rest] = proxied();
    expect(rest).toEqual([]);
    expect([first.status, second.status, third.status]).toEqual([429, 429, 404]);
    // The retry backoff (250 ms, doubling, never under half of it) stands in for the missing wait.
    expect(second.at - first.at).toBeGreaterThanOrEqual(125);
    expect(third.at - second.at).toBeGreaterThanOrEqual(250);
  });

  it('gives up after the bounded number of proxy 429s, spread out, with the usual 500, spending none of the budget', async () => {
    const before = await sample(metricsPort, platformCalls(GUILD_ROUTE, 'rate_limited'));
    const invalidBefore = await sample(metricsPort, INVALID_ANSWERS);
    const { proxied, seen } = watch();
    proxy.refuse(10, '0');
    const res = await t.http().get(`/__probe/platform/guilds/${unknownGuild()}`).expect(500);
    expect(res.body).toEqual(UNAVAILABLE);
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('still rate limited after 4 attempts');

    // The first attempt and 3 rate-limit retries, none sent at once.
    const times = proxied().map((r) => r.at);
    expect(times).toHaveLength(4);
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThan(100);
    expect(seen()).toEqual([]);
    expect(await sample(metricsPort, platformCalls(GUILD_ROUTE, 'rate_limited'))).toBe(before + 1);
    // Refusals of the proxy's own, which the platform never saw: a crowd of them cannot stop the
    // fleet's calls.
    expect(await sample(metricsPort, INVALID_ANSWERS)).toBe(invalidBefore);
  });

  it('refuses at once a proxy 429 asking for too long a wait, without counting it', async () => {
    const invalidBefore = await sample(metricsPort, INVALID_ANSWERS);
    const { proxied, seen } = watch();
    proxy.refuse(1, '60');
    const started = Date.now();
    const res = await t.http().get(`/__probe/platform/guilds/${unknownGuild()}`).expect(500);
    expect(res.body).toEqual(UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(proxied()).toHaveLength(1);
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('rate limited for 60000 ms');
    // The platform never saw this one.
    expect(seen()).toEqual([]);
    expect(await sample(metricsPort, INVALID_ANSWERS)).toBe(invalidBefore);
  });
});

describe('with a REST proxy that is down', () => {
  const platform = useEmulator();
  let t: TestApp;

  beforeAll(async () => {
    const port = await unusedPort();
    t = await createTestApp({
      controllers: [PlatformProbeController],
      env: { ...liveModeEnv(platform()), DISCORD_REST_PROXY_URL: `http://127.0.0.1:${port}` },
    });
  });
  afterAll(() => t?.close());

  it('answers a bot lookup with the platform-unavailable 500 after the bounded retries, never around the proxy', async () => {
    const before = platform().requests.length;
    const started = Date.now();
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.community}`).expect(500);
    expect(res.body).toEqual(UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(5_000);
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('network error after 3 attempts');
    expect(platform().requests.length).toBe(before);
  });

  it('still logs users in: a login makes no call of the bot', async () => {
    const before = platform().requests.length;
    const code = platform().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
    const res = await t
      .http()
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    expect(res.body).toMatchObject({ token: expect.any(String) });
    const calls = platform().requests.slice(before);
    expect(calls.slice(0, 2).map((r) => [r.route, r.auth, r.status])).toEqual([
      // Basic credentials are no bot or user token (the emulator files them as "invalid").
      ['POST /oauth2/token', 'invalid', 200],
      ['GET /users/@me', 'bearer', 200],
    ]);
    expect(calls.filter((r) => r.auth === 'bot')).toEqual([]);
  });
});

describe('with a REST proxy that cannot reach the platform', () => {
  const platform = useEmulator();
  let proxy: RestProxy;
  let t: TestApp;

  beforeAll(async () => {
    proxy = await startRestProxy({ apiUrl: `http://127.0.0.1:${await unusedPort()}/api` });
    t = await createTestApp({
      controllers: [PlatformProbeController],
      env: { ...liveModeEnv(platform()), DISCORD_REST_PROXY_URL: proxy.url },
    });
    // The bot's own user, read at start, fails the same way: done before the test counts.
    await t.app
      .get(PlatformService)
      .getBotUser()
      .catch(() => undefined);
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it("takes the proxy's empty 200 for the failure it is, not for a guild", async () => {
    const before = proxy.requests.length;
    const res = await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.community}`).expect(500);
    expect(res.body).toEqual(UNAVAILABLE);
    const logged = t.logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(JSON.stringify(logged)).toContain('empty answer');
    expect(JSON.stringify(logged)).toContain('after 3 attempts');
    expect(proxy.requests.slice(before).map((r) => r.status)).toEqual([200, 200, 200]);
  });
});
