import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { BucketQueues } from 'src/platform/bucket-queue';
import { eventually } from 'test/support/eventually';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

/**
 * The platform limits its token endpoint per address, so the whole fleet shares it: made-up codes
 * sent by anonymous callers must not make a real login wait behind them (docs/request-costs.md,
 * "Shared platform buckets").
 */
describe("the OAuth2 token endpoint's queue, shared by every login", () => {
  const platform = useEmulator();
  let app: TestApp;
  let held: Promise<void> | null = null;
  let release = (): void => undefined;

  beforeAll(async () => {
    // The test client plays the one trusted proxy: X-Forwarded-For names each caller's address.
    app = await createTestApp({ env: { ...liveModeEnv(platform()), TRUST_PROXY: '127.0.0.1' } });
    platform().intercept(async (route) => {
      if (route === 'POST /oauth2/token' && held) await held;
    });
  });
  afterAll(async () => {
    platform().intercept(null);
    await app.close();
  });

  const login = (from: string, code: string): Promise<Response> =>
    Promise.resolve(
      app
        .http()
        .post('/oauth2')
        .set('X-Forwarded-For', from)
        .send({ code, redirect_uri: DEMO_REDIRECT }),
    );

  it("refuses an address's flood of made-up codes past its share at once, and exchanges a real login next", async () => {
    const attacker = '203.0.113.50';
    // The attacker has been served before: one made-up code, refused by the platform.
    expect((await login(attacker, 'made-up-code-0')).status).toBe(400);
    const before = platform().countRequests('POST /oauth2/token');
    held = new Promise((resolve) => (release = resolve));
    const flood = Array.from({ length: 14 }, (_, i) => login(attacker, `made-up-code-${i + 1}`));
    const queues = app.app.get(BucketQueues);
    expect(
      await eventually(
        () => Promise.resolve(queues.stats().waiting),
        (waiting) => waiting === 9,
        10_000,
      ),
    ).toBe(9);
    // The four past the attacker's share are refused while the rest still wait.
    const early = await Promise.race([
      Promise.all(flood.slice(10)),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
    ]);
    expect(early).not.toBe('still waiting');
    const code = platform().issueCode({ userId: DEMO_IDS.carol, redirectUri: DEMO_REDIRECT });
    const real = login('198.51.100.20', code);
    expect(
      await eventually(
        () => Promise.resolve(queues.stats().waiting),
        (waiting) => waiting === 10,
        10_000,
      ),
    ).toBe(10);
    release();
    held = null;
    const answers = await Promise.all(flood);
    expect(answers.map((res) => res.status).sort()).toEqual([
      ...Array<number>(10).fill(400),
      ...Array<number>(4).fill(429),
    ]);
    for (const res of answers.filter((answer) => answer.status === 429)) {
      expect(res.body).toEqual({
        code: 'RateLimited',
        message: expect.stringMatching(
          /rate limit for POST \/oauth2\/token is shared by every user of this service and you already have 10 calls waiting for it; retry in \d+ seconds/,
        ),
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const carol = await real;
    expect(carol.status).toBe(200);
    expect(carol.body.user_id).toBe(DEMO_IDS.carol);
    // Exchanges: the held one, then Carol's, then the attacker's nine. The refused four cost none.
    const exchanges = platform()
      .requests.filter((request) => request.route === 'POST /oauth2/token')
      .slice(-11);
    expect(platform().countRequests('POST /oauth2/token') - before).toBe(11);
    expect(exchanges[1].status).toBe(200);
    expect(exchanges.filter((request) => request.status === 200)).toHaveLength(1);
  });
});
