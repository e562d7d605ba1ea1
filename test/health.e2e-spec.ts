import { EmbeddedPostgres } from 'src/database/embedded-postgres';
import { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';

describe('health', () => {
  describe('on a reachable database', () => {
    const t = useTestApp();

    it('GET /healthz is public and answers ok', async () => {
      const res = await t().http().get('/healthz').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
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
    let target: { database: TestDatabase; stop(): Promise<void> };
    let proxy: TcpProxy;
    let t: TestApp;

    beforeAll(async () => {
      target = await startDatabaseServer();
      const upstream = new URL(target.database.url);
      proxy = await TcpProxy.start(upstream.hostname, Number(upstream.port || 5432));
      const proxied = new URL(target.database.url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      t = await createTestApp({
        // The target owns the database; the app only borrows it through the proxy.
        database: { ...target.database, url: proxied.toString(), drop: () => Promise.resolve() },
        env: { REDIS_URL: undefined },
      });
    });
    afterAll(async () => {
      await t.close();
      await proxy.close();
      await target.stop();
    });

    it('answers 503 with the error shape and which check failed, then recovers', async () => {
      await t.http().get('/readyz').expect(200);

      proxy.cut();
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
      const up = await t.http().get('/readyz').expect(200);
      expect(up.body).toEqual({ status: 'ok', checks: { database: 'up' } });
    });
  });
});

/**
 * A database server the app reaches over TCP: a fresh database on the CI PostgreSQL, or an embedded
 * PGlite server of the test's own.
 */
async function startDatabaseServer(): Promise<{ database: TestDatabase; stop(): Promise<void> }> {
  const database = await createTestDatabase();
  if (database.engine === 'postgres') return { database, stop: () => database.drop() };
  const embedded = await EmbeddedPostgres.start(null);
  return {
    database: { url: embedded.url, engine: 'postgres', drop: () => Promise.resolve() },
    stop: () => embedded.stop(),
  };
}
