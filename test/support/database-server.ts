import { join } from 'node:path';
import { EmbeddedPostgres } from 'src/database/embedded-postgres';
import type { Environment } from 'src/config/app-config';
import { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase } from 'test/support/test-database';

/** An application whose database the test can make unreachable (`proxy.cut()`) and restore. */
export interface AppWithCuttableDatabase {
  app: TestApp;
  proxy: TcpProxy;
  close(): Promise<void>;
}

/**
 * Boots an application that reaches its database through a TCP proxy: a fresh database on the
 * CI's PostgreSQL, or an embedded PGlite server of the test's own (the default run).
 */
export async function startAppWithCuttableDatabase(
  env: Environment = {},
): Promise<AppWithCuttableDatabase> {
  const target = await startDatabaseServer();
  const upstream = new URL(target.url);
  // The embedded server listens on a Unix socket: its directory is the URL's (encoded) host.
  const proxy = await TcpProxy.start(
    target.embedded
      ? { path: join(decodeURIComponent(upstream.hostname), '.s.PGSQL.5432') }
      : { host: upstream.hostname, port: Number(upstream.port || 5432) },
  );
  const proxied = new URL(target.url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const app = await createTestApp({
    // The target owns the database; the app only borrows it through the proxy.
    database: {
      engine: 'postgres',
      url: proxied.toString(),
      env: { DATABASE_URL: proxied.toString() },
      drop: () => Promise.resolve(),
    },
    // An embedded server serves one connection at a time.
    env: { DATABASE_POOL_SIZE: target.embedded ? '1' : undefined, ...env },
  });
  return {
    app,
    proxy,
    close: async () => {
      await app.close();
      await proxy.close();
      await target.stop();
    },
  };
}

interface DatabaseServer {
  /** Where the server listens, with the database in the path. */
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

async function startDatabaseServer(): Promise<DatabaseServer> {
  const database = await createTestDatabase();
  if (database.engine === 'postgres') {
    return { url: database.url, embedded: false, stop: () => database.drop() };
  }
  const server = await EmbeddedPostgres.start(database.directory);
  return {
    url: server.url,
    embedded: true,
    stop: async () => {
      await server.stop();
      await database.drop();
    },
  };
}
