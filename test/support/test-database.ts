import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A database of its own for one test file. */
export interface TestDatabase {
  /** The `DATABASE_URL` the application under test uses. */
  readonly url: string;
  readonly engine: 'postgres' | 'pglite';
  drop(): Promise<void>;
}

/**
 * With `DATABASE_URL=postgres://…` in the environment (as in CI), creates a fresh database on that
 * server and drops it afterwards; otherwise the application gets its own in-memory PGlite.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl?.startsWith('postgres')) {
    return { url: 'memory://', engine: 'pglite', drop: () => Promise.resolve() };
  }
  const name = `bms_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    engine: 'postgres',
    drop: () =>
      withAdminClient(serverUrl, (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`)),
  };
}

async function withAdminClient(
  url: string,
  work: (client: Client) => Promise<unknown>,
): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
