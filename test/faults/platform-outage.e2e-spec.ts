import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { DEFAULT_BREAKER } from 'src/platform/platform-http';
import type { EmulatorFault } from 'test/support/emulator-faults';
import { emulatorOf, loginAs } from 'test/support/auth';
import { DEMO_REDIRECT } from 'test/support/platform';
import { rawRequest, type RawRequest, type RawResponse } from 'test/support/raw-http';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

const GUILD = DEMO_IDS.community;
const TIMEOUT_MS = 300;
/** Three attempts of 300 ms with backoff: an answer must come well within this. */
const ANSWER_WITHIN_MS = 4_000;

/** Every route that needs the platform, as the guild owner calls it. */
function platformRoutes(t: TestApp, token: string): [string, () => Promise<RawRequest>][] {
  const auth = { authorization: `Bearer ${token}` };
  const jsonAuth = { ...auth, 'content-type': 'application/json' };
  return [
    [
      'POST /oauth2',
      async () => {
        // The demo route hands out a code without calling the platform.
        const code = await t.http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.bob}`).expect(200);
        const body = JSON.stringify({ code: code.body.code, redirect_uri: DEMO_REDIRECT });
        return {
          method: 'POST',
          path: '/oauth2',
          headers: { 'content-type': 'application/json' },
          body,
        };
      },
    ],
    [
      'GET /users/@me/guilds?refresh=true',
      () =>
        Promise.resolve({ method: 'GET', path: '/users/@me/guilds?refresh=true', headers: auth }),
    ],
    [
      'GET /users/@me/guilds/{guild_id}',
      () => Promise.resolve({ method: 'GET', path: `/users/@me/guilds/${GUILD}`, headers: auth }),
    ],
    // GET /guilds/{guild_id}/settings is not here: it needs only the bot's membership, which the
    // membership feed holds (test/guilds/cold-open.e2e-spec.ts), so it is served through an outage.
    [
      'POST /guilds/{guild_id}/settings',
      () =>
        Promise.resolve({
          method: 'POST',
          path: `/guilds/${GUILD}/settings`,
          headers: jsonAuth,
          body: JSON.stringify({ setting: 'auditlog_sinks', operation: 'View', fields: {} }),
        }),
    ],
  ];
}

/** The answer of a request that needed the platform while it is down. */
function expectPlatformOutage(route: string, res: RawResponse): void {
  expect({
    route,
    status: res.status,
    body: res.json,
    retryAfter: res.headers['retry-after'],
  }).toEqual({
    route,
    status: 500,
    // When to try again.
    retryAfter: '5',
    body: {
      message: 'The chat platform is unavailable; try again later',
      code: 'InternalError',
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    },
  });
}

const OUTAGES: [string, EmulatorFault][] = [
  [
    'answers 500 to everything',
    { kind: 'respond', status: 500, body: { message: 'db-17.internal down' } },
  ],
  ['hangs on everything', { kind: 'hang', delayMs: 10_000 }],
];

describe.each(OUTAGES)('faults: the platform %s', (_name, fault) => {
  // Short platform and cache lifetimes, so that every request below reaches the platform.
  const t = useTestApp({ env: { PLATFORM_TIMEOUT_MS: String(TIMEOUT_MS) } });
  let routes: [string, () => Promise<RawRequest>][];

  beforeAll(async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    routes = platformRoutes(t(), login.token);
  });

  it('gives a clean 500 InternalError on every route within the timeout, then recovers', async () => {
    faultsOf(emulatorOf(t())).inject('*', fault, 1_000);
    for (const [route, request] of routes) {
      const res = await rawRequest(t().port, await request());
      expectPlatformOutage(route, res);
      expect(res.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
      expect(res.text).not.toContain('db-17');
    }

    faultsOf(emulatorOf(t())).clear();
    // Seen down, the platform is tried again once a second: served again after a probe.
    await servedAgain(t(), routes[1][1]);
    for (const [route, request] of routes) {
      const res = await rawRequest(t().port, await request());
      expect({ route, status: res.status }).toEqual({ route, status: 200 });
    }
  });
});

/** The breaker's probe interval (DEFAULT_BREAKER): one call a second tries a platform seen down. */
const PROBE_INTERVAL_MS = DEFAULT_BREAKER.probeIntervalMs;

/**
 * Sends `request` until it is answered 200, and returns how long that took; fails if it is not
 * within two probe intervals and a second for the answer.
 */
async function servedAgain(t: TestApp, request: () => Promise<RawRequest>): Promise<number> {
  const started = Date.now();
  const deadline = started + 2 * PROBE_INTERVAL_MS + 1_000;
  for (;;) {
    const res = await rawRequest(t.port, await request(), 10_000);
    if (res.status === 200) return Date.now() - started;
    expect(res.status).toBe(500);
    if (Date.now() > deadline) throw new Error('The platform is back, but not used again');
    // Refusals are answered at once: a short pause between tries, not a wait for the probe.
    await sleep(50);
  }
}

/**
 * Sends `request` while the platform is seen down, and returns the first answer that did not reach
 * the platform. Once a probe interval one request is let through to see whether the platform is
 * back (the probe); a busy machine may hand that turn to any request here, so a request that made a
 * call is sent again: right after a failed probe, the next one is an interval away.
 */
async function refusedWithoutACall(
  t: TestApp,
  emulator: ReturnType<typeof emulatorOf>,
  route: string,
  request: () => Promise<RawRequest>,
): Promise<RawResponse> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = emulator.countAllRequests();
    const res = await rawRequest(t.port, await request(), 10_000);
    expectPlatformOutage(route, res);
    if (emulator.countAllRequests() === before) return res;
  }
  throw new Error(`${route} reached the platform on every try while it was seen down`);
}

describe.each(OUTAGES)('faults: the platform %s, seen down', (_name, fault) => {
  const t = useTestApp({ env: { PLATFORM_TIMEOUT_MS: '1000' } });

  it('refuses requests that need it without calling it, and serves again once a probe answers', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    const routes = platformRoutes(t(), login.token);
    const refresh = routes[1][1];
    const emulator = emulatorOf(t());
    faultsOf(emulator).inject('*', fault, 1_000);

    // The service learns the outage from its own calls failing, each after its timeouts/retries;
    // then it refuses without calling the platform.
    const firstSeen = await rawRequest(t().port, await refresh(), 10_000);
    expect(firstSeen.status).toBe(500);
    await refusedWithoutACall(t(), emulator, routes[1][0], refresh);

    // Every route that needs the platform is refused the same way, with the outage's answer.
    for (const [route, request] of routes) {
      await refusedWithoutACall(t(), emulator, route, request);
    }

    faultsOf(emulator).clear();
    await servedAgain(t(), refresh);
    for (const [route, request] of routes) {
      const res = await rawRequest(t().port, await request());
      expect({ route, status: res.status }).toEqual({ route, status: 200 });
    }
  });
});
