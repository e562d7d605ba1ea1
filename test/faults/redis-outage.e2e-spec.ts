import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, loginAs } from 'test/support/auth';
import { describeWithRedis, proxyRedis } from 'test/support/redis-proxy';
import type { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { actor, SINK_FIELDS, ok, type Actor } from 'test/support/demo-world';

describeWithRedis('faults: Redis stops mid-run', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let owner: Actor;

  beforeAll(async () => {
    const redis = await proxyRedis();
    proxy = redis.proxy;
    t = await createTestApp({ env: { REDIS_URL: redis.url, RATE_LIMITS_ENABLED: 'true' } });
    owner = await actor(t, DEMO_IDS.alice);
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  /** Runs the service's everyday requests and checks each is answered as with Redis up. */
  async function everydayTraffic(): Promise<void> {
    const http = (): ReturnType<TestApp['http']> => t.http();
    await http().get('/sessions/@me').set('Authorization', owner.token).expect(200);
    // A login: the code-reuse guard, the session cache and the rate limiter all use Redis.
    const login = await loginAs(t, DEMO_IDS.bob);
    const api = await createApiToken(t, login.token);
    await http().get('/sessions/@me').set('Authorization', api.token).expect(200);
    // Revocation still takes effect at once on this instance.
    await http().delete(`/sessions/${api.sessionId}`).set('Authorization', login.token).expect(204);
    await http().get('/sessions/@me').set('Authorization', api.token).expect(401);
    // Settings: the per-guild version lives in Redis.
    const sink = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as { id: string };
    const viewed = ok(await owner.exec('auditlog_sinks', 'View', { id: sink.id }));
    expect(viewed).toEqual([sink]);
    await http().get('/bot-stats').expect(200);
    await http().get('/config').expect(200);
  }

  it('keeps serving every kind of request, reports itself degraded, and uses Redis again when it is back', async () => {
    await everydayTraffic();
    proxy.cut();

    const started = Date.now();
    await everydayTraffic();
    // Each Redis call gives up after its short timeout instead of holding requests.
    expect(Date.now() - started).toBeLessThan(15_000);
    const degraded = await t.http().get('/readyz').expect(200);
    expect(degraded.body).toEqual({
      status: 'degraded',
      checks: { database: 'up', redis: 'down' },
    });

    proxy.restore();
    await waitForReady(t);
    await everydayTraffic();
  });
});

async function waitForReady(t: TestApp): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const res = await t.http().get('/readyz');
    if (res.body.status === 'ok') return;
    await sleep(200);
  }
  throw new Error('Redis was not back within 15 s');
}
