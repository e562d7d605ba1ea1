import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { EmulatorFault } from 'test/support/emulator-faults';
import { emulatorOf, loginAs } from 'test/support/auth';
import { DEMO_REDIRECT } from 'test/support/platform';
import { rawRequest, type RawRequest } from 'test/support/raw-http';
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
      expect(res.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
      expect(res.text).not.toContain('db-17');
    }

    faultsOf(emulatorOf(t())).clear();
    for (const [route, request] of routes) {
      const res = await rawRequest(t().port, await request());
      expect({ route, status: res.status }).toEqual({ route, status: 200 });
    }
  });
});
