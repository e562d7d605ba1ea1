import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Environment } from 'src/config/app-config';
import { migratedTemplate } from 'test/support/migrated-template';

/** A database of its own for one test file. */
export type TestDatabase = PostgresTestDatabase | EmbeddedTestDatabase;

interface TestDatabaseBase {
  /** The variables that point the application under test at this database. */
  readonly env: Environment;
  drop(): Promise<void>;
}

/** A database on the PostgreSQL server that `DATABASE_URL` names (CI's second pass). */
export interface PostgresTestDatabase extends TestDatabaseBase {
  readonly engine: 'postgres';
  readonly url: string;
}

/** An embedded (PGlite) data directory, as `DATA_DIR` holds one in production. */
export interface EmbeddedTestDatabase extends TestDatabaseBase {
  readonly engine: 'pglite';
  /** The data directory: whoever starts the embedded database on it owns it until it stops. */
  readonly directory: string;
}

export interface TestDatabaseOptions {
  /**
   * Whether the schema is there already (the default: the application's migrations applied, so a
   * boot finds none pending), or the database is as new as a first start's, for the tests of
   * migrations at boot. A PostgreSQL test database is always new.
   */
  migrated?: boolean;
}

/**
 * With `DATABASE_URL=postgres://…` in the environment (as in CI), creates a fresh database on that
 * server and drops it afterwards; otherwise an embedded data directory of its own, removed by
 * `drop`, copied from the migrated template (test/support/migrated-template.ts).
 */
export async function createTestDatabase({
  migrated = true,
}: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl?.startsWith('postgres')) return createEmbeddedDatabase(migrated);
  const name = `bms_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    engine: 'postgres',
    url: url.toString(),
    env: { DATABASE_URL: url.toString() },
    drop: () =>
      withAdminClient(serverUrl, (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`)),
  };
}

async function createEmbeddedDatabase(migrated: boolean): Promise<EmbeddedTestDatabase> {
  const template = migrated ? await migratedTemplate() : null;
  // The suite points TMPDIR at memory where it can (jest.config.js): a copy there is cheap.
  const dataDir = mkdtempSync(join(tmpdir(), 'bms-test-db-'));
  const directory = join(dataDir, 'pglite');
  // Without a template the directory is left missing: a first start seeds it, as in production.
  if (template) cpSync(template, directory, { recursive: true });
  return {
    engine: 'pglite',
    directory,
    env: { DATABASE_URL: undefined, DATA_DIR: dataDir },
    drop: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
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
