import type { Environment } from 'src/config/app-config';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';

/** PostgreSQL and Redis are both configured (CI's second pass): several instances can share them. */
export const sharedServers = Boolean(
  process.env.REDIS_URL && process.env.DATABASE_URL?.startsWith('postgres'),
);
export const describeShared = sharedServers ? describe : describe.skip;

/**
 * Two instances of the application on one database and one Redis, as behind a load balancer,
 * for the enclosing `describe`. `env` may be a function, read once the `beforeAll` hooks declared
 * before this call have run (an emulator's address, say).
 */
export function useTwoInstances(env: Environment | (() => Environment)): () => [TestApp, TestApp] {
  let database: TestDatabase | undefined;
  let apps: [TestApp, TestApp] | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = { ...database, drop: () => Promise.resolve() };
    const environment = typeof env === 'function' ? env() : env;
    apps = [
      await createTestApp({ database: shared, env: environment }),
      await createTestApp({ database: shared, env: environment }),
    ];
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await database?.drop();
  });
  return () => {
    if (!apps) throw new Error('the instances are not running (beforeAll failed?)');
    return apps;
  };
}
