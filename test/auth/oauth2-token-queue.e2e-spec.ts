import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { eventually } from 'test/support/eventually';
import { DEMO_REDIRECT, liveModeEnv } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

const TOKEN_ROUTE = 'POST /oauth2/token';

/** The most token-endpoint calls the platform saw within any one second. */
function busiestSecond(requests: readonly EmulatedRequest[]): number {
  const times = requests.filter((r) => r.route === TOKEN_ROUTE).map((r) => r.at);
  let most = 0;
  for (const start of times) {
    most = Math.max(most, times.filter((at) => at >= start && at < start + 1_000).length);
  }
  return most;
}

/**
 * The platform limits its token endpoint per address (10 calls a second), so the whole fleet
 * shares it (docs/request-costs.md, "Shared platform identities"): made-up codes sent from many
 * addresses must not get real logins refused, a crowd behind one address is not refused while
 * the endpoint has room, and the platform never sees more than its limit in a second. With Redis
 * (CI's second pass) the rate and the queue's places are the fleet's.
 */
describe("the OAuth2 token endpoint's rate, shared by every login", () => {
  let platform: PlatformEmulator;
  let app: TestApp;

  beforeAll(async () => {
    platform = await PlatformEmulator.start(DEMO_SEED, {}, { rateLimits: {} });
    // The test client plays the one trusted proxy: X-Forwarded-For names each caller's address.
    app = await createTestApp({ env: { ...liveModeEnv(platform), TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => {
    await app.close();
    await platform.close();
  });

  const login = (from: string, code: string): Promise<Response> =>
    Promise.resolve(
      app
        .http()
        .post('/oauth2')
        .set('X-Forwarded-For', from)
        .send({ code, redirect_uri: DEMO_REDIRECT }),
    );
  const realCode = (userId: string): string =>
    platform.issueCode({ userId, redirectUri: DEMO_REDIRECT });

  it('logs in a crowd behind one address together, within the platform’s limit', async () => {
    const nat = '192.0.2.77';
    // One login first: the endpoint's queue learns how long an exchange takes.
    expect((await login(nat, realCode(DEMO_IDS.alice))).status).toBe(200);
    const since = platform.requests.length;
    const users = [DEMO_IDS.alice, DEMO_IDS.bob, DEMO_IDS.carol, DEMO_IDS.dave, DEMO_IDS.demoUser];
    const crowd = await Promise.all(
      Array.from({ length: 15 }, (_, i) => login(nat, realCode(users[i % users.length]))),
    );
    expect(crowd.map((res) => res.status)).toEqual(Array<number>(15).fill(200));
    const calls = platform.requests.slice(since);
    expect(busiestSecond(calls)).toBeLessThanOrEqual(10);
    expect(calls.filter((r) => r.route === TOKEN_ROUTE && r.status === 429)).toEqual([]);
  });

  it('serves real logins while made-up codes from many addresses burst, refusing the excess at once', async () => {
    const since = platform.requests.length;
    // Twelve addresses, ten invented codes each, all at once.
    const burst = Array.from({ length: 120 }, (_, i) =>
      login(`203.0.113.${1 + (i % 12)}`, `made-up-${i}`),
    );
    // Once the burst is under way at the platform, two real users log in from their own addresses.
    await eventually(
      () => Promise.resolve(platform.requests.slice(since).some((r) => r.route === TOKEN_ROUTE)),
      (seen) => seen,
      10_000,
    );
    const real = await Promise.all([
      login('198.51.100.20', realCode(DEMO_IDS.carol)),
      login('198.51.100.21', realCode(DEMO_IDS.bob)),
    ]);
    expect(real.map((res) => [res.status, res.body.user_id as string])).toEqual([
      [200, DEMO_IDS.carol],
      [200, DEMO_IDS.bob],
    ]);
    const answers = await Promise.all(burst);
    expect(new Set(answers.map((res) => res.status))).toEqual(new Set([400, 429]));
    for (const res of answers.filter((answer) => answer.status === 429)) {
      expect(res.body).toEqual({
        code: 'RateLimited',
        message: expect.stringMatching(/rate limit for .* is shared by every user of this service/),
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const calls = platform.requests.slice(since);
    expect(busiestSecond(calls)).toBeLessThanOrEqual(10);
    expect(calls.filter((r) => r.route === TOKEN_ROUTE && r.status === 429)).toEqual([]);
  });
});
