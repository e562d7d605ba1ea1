import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { REPUBLISH_INTERVAL_MS } from 'src/settings/engine/settings-cache';
import { eventually } from 'test/support/eventually';
import { describeWithPrivateServers } from 'test/support/describe-private-servers';
import { PrivatePostgres, PrivateRedis } from 'test/support/private-servers';
import { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { actor, SINK_FIELDS, ok, type Actor } from 'test/support/demo-world';

interface Sink {
  id: string;
  enabled: boolean;
  version: number;
}

/**
 * Settings reads after Redis lost its keys or missed a change: what an instance serves is what the
 * database holds, never an answer cached before (docs/caching.md, "The per-guild settings cache").
 * Two instances, on a PostgreSQL and a Redis of the test's own; Redis is reached through a proxy
 * that can cut the connection.
 */
describeWithPrivateServers({ redis: true, postgres: true })(
  'faults: Redis restarts empty or misses a change',
  () => {
    let redis: PrivateRedis;
    let postgres: PrivatePostgres;
    let proxy: TcpProxy;
    let apps: TestApp[];
    let owner: Actor;
    let other: Actor;

    beforeAll(async () => {
      redis = await PrivateRedis.start();
      postgres = await PrivatePostgres.start();
      proxy = await TcpProxy.start({ host: '127.0.0.1', port: redis.port });
      const database = {
        engine: 'postgres' as const,
        url: postgres.url,
        env: { DATABASE_URL: postgres.url },
        drop: () => Promise.resolve(),
      };
      const env = { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_KEY_PREFIX: 'bms:' };
      // Two instances on one database and one Redis, as behind a load balancer.
      const first = await createTestApp({ database, env });
      apps = [first, await createTestApp({ database, env })];
      owner = await actor(first, DEMO_IDS.alice);
      other = await actor(apps[1], DEMO_IDS.alice);
    });
    afterAll(async () => {
      for (const app of [...(apps ?? [])].reverse()) await app.close();
      await proxy?.close();
      await redis?.stop();
      postgres?.destroy();
    });

    const view = async (who: Actor, id?: string): Promise<Sink[]> =>
      (ok(await who.exec('auditlog_sinks', 'View', id === undefined ? {} : { id })) as Sink[]).map(
        ({ id, enabled, version }) => ({ id, enabled, version }),
      );

    it('serves no answer cached before Redis restarted empty, on either instance', async () => {
      // Cached on both instances before anything exists, then after a Create.
      expect(await view(owner)).toEqual([]);
      expect(await view(other)).toEqual([]);
      const created = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as Sink;
      const atCreate = [{ id: created.id, enabled: true, version: 1 }];
      expect(await view(owner)).toEqual(atCreate);
      expect(await view(other)).toEqual(atCreate);

      await redis.restart();
      await waitForRedis(apps);

      // A version counted again from nothing would find the entries cached before the restart.
      expect(await view(owner)).toEqual(atCreate);
      expect(await view(other)).toEqual(atCreate);
      ok(
        await owner.exec('auditlog_sinks', 'Update', {
          id: created.id,
          enabled: false,
          version: 1,
        }),
      );
      const updated = [{ id: created.id, enabled: false, version: 2 }];
      expect(await view(owner)).toEqual(updated);
      expect(await view(other)).toEqual(updated);
    });

    it('serves no answer older than a change Redis could not be told of, once Redis is back', async () => {
      const created = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as Sink;
      const before = [{ id: created.id, enabled: true, version: 1 }];
      // Cached on both instances.
      expect(await view(owner, created.id)).toEqual(before);
      expect(await view(other, created.id)).toEqual(before);

      // The change commits while Redis is unreachable: its new version cannot be published.
      proxy.cut();
      ok(
        await owner.exec('auditlog_sinks', 'Update', {
          id: created.id,
          enabled: false,
          version: 1,
        }),
      );
      const changed = [{ id: created.id, enabled: false, version: 2 }];
      proxy.restore();
      await waitForRedis(apps);

      // The writer never serves what it cached before its own change.
      expect(await view(owner, created.id)).toEqual(changed);
      // The other instance serves it once the writer has published it again (every second).
      const seen = await eventually(
        () => view(other, created.id),
        (sinks) => sinks[0]?.enabled === false,
        REPUBLISH_INTERVAL_MS * 5,
      );
      expect(seen).toEqual(changed);
    });
  },
);

/** Until every instance's Redis connection is ready again. */
async function waitForRedis(apps: TestApp[]): Promise<void> {
  for (const app of apps) {
    const readiness = await eventually(
      async () => (await app.http().get('/readyz')).body as { status: string },
      (body) => body.status === 'ok',
      15_000,
    );
    expect(readiness.status).toBe('ok');
  }
}
