import { setTimeout as sleep } from 'node:timers/promises';
import { Clock } from 'src/common/time/clock';
import { READINESS_REUSE_MS } from 'src/health/health.service';
import {
  startAppWithCuttableDatabase,
  type AppWithCuttableDatabase,
} from 'test/support/database-server';
import { eventually } from 'test/support/eventually';
import type { TcpProxy } from 'test/support/tcp-proxy';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { DataSource } from 'typeorm';

describe('health', () => {
  describe('on a reachable database', () => {
    const t = useTestApp();

    it('GET /healthz is public and answers ok', async () => {
      const res = await t().http().get('/healthz').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('GET /readyz shares one round of pings between the probes of one second', async () => {
      // The second stands still, however slowly a loaded machine answers the burst.
      const clock = t().app.get(Clock);
      const frozen = jest.spyOn(clock, 'nowMs').mockReturnValue(clock.nowMs());
      try {
        await t().http().get('/readyz').expect(200);
        const queries = countQueries(t());
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => t().http().get('/readyz')),
        );
        expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 20 }, () => 200));
        expect(queries.count()).toBe(0);
        queries.stop();
      } finally {
        frozen.mockRestore();
      }
    });

    it('GET /readyz reports every configured dependency up', async () => {
      const res = await t().http().get('/readyz').expect(200);
      const checks = t().config.redisUrl ? { database: 'up', redis: 'up' } : { database: 'up' };
      expect(res.body).toEqual({ status: 'ok', checks });
    });
  });

  describe('when Redis is configured but unreachable', () => {
    // Nothing listens on port 1: every connection attempt is refused.
    const t = useTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });

    it('stays ready, reports the service degraded and keeps serving', async () => {
      const res = await t().http().get('/readyz').expect(200);
      expect(res.body).toEqual({
        status: 'degraded',
        checks: { database: 'up', redis: 'down' },
      });
      await t().http().get('/config').expect(200);
    });
  });

  describe('when the database becomes unreachable', () => {
    let server: AppWithCuttableDatabase;
    let t: TestApp;
    let proxy: TcpProxy;

    beforeAll(async () => {
      server = await startAppWithCuttableDatabase({ REDIS_URL: undefined });
      ({ app: t, proxy } = server);
    });
    afterAll(() => server.close());

    it('answers 503 with the error shape and which check failed, then recovers', async () => {
      await t.http().get('/readyz').expect(200);

      proxy.cut();
      // A readiness round is reused for a second.
      await sleep(READINESS_REUSE_MS);
      const down = await t.http().get('/readyz').expect(503);
      expect(down.headers['content-type']).toMatch(/^application\/json/);
      expect(down.body).toEqual({
        status: 'error',
        message: 'Not ready: the database is unreachable',
        code: 'InternalError',
        checks: { database: 'down' },
      });
      // Liveness does not depend on the database.
      await t.http().get('/healthz').expect(200);

      proxy.restore();
      // Back once the instance's next try of the database (once a second) gets through and the
      // reused readiness round has passed: waited for, not timed.
      const up = await eventually(
        () => Promise.resolve(t.http().get('/readyz')),
        (res) => res.status === 200,
        10_000,
      );
      expect(up.status).toBe(200);
      expect(up.body).toEqual({ status: 'ok', checks: { database: 'up' } });
    });
  });
});

/** Counts the SQL statements the application sends from now on. */
/**
 * Counts the readiness probe's own statement (`SELECT 1`), not every query: the service's timers
 * (the membership feed reads the database every 5 s) may run inside the window counted.
 */
function countQueries(t: TestApp): { count(): number; stop(): void } {
  const dataSource = t.app.get(DataSource);
  const original = dataSource.query.bind(dataSource);
  let count = 0;
  dataSource.query = ((...args: Parameters<DataSource['query']>) => {
    if (args[0] === 'SELECT 1') count += 1;
    return original(...args);
  }) as DataSource['query'];
  return {
    count: () => count,
    stop: () => {
      dataSource.query = original;
    },
  };
}
