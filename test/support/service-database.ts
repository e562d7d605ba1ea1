import { DataSource, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { dataSourceOptions } from 'src/database/data-source.options';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres } from 'src/database/embedded-postgres';
import {
  createTestDatabase,
  type PostgresTestDatabase,
  type TestDatabase,
} from 'test/support/test-database';

/** A real database for the service tier: the application's schema, by its migrations. */
export interface ServiceDatabase {
  readonly dataSource: DataSource;
  /** Empties every table (not the migrations' record): each test starts from nothing. */
  clear(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens a database of the service's schema for one test file: an embedded one (PGlite, as
 * `npm start` runs by default), or a fresh PostgreSQL database when `DATABASE_URL` names a server
 * (as in CI). `entities` and `sql`: a fixture setting's entity and the statements that create
 * its table, as a module's migration would.
 */
export async function openServiceDatabase({
  entities = [],
  sql = [],
}: { entities?: EntityTarget<ObjectLiteral>[]; sql?: string[] } = {}): Promise<ServiceDatabase> {
  const database = await createTestDatabase();
  const { dataSource, disconnect } = await connect(database, entities);
  try {
    await dataSource.runMigrations();
    for (const statement of sql) await dataSource.query(statement);
  } catch (error) {
    await disconnect();
    await database.drop();
    throw error;
  }
  const tables = dataSource.entityMetadatas.map((entity) => `"${entity.tableName}"`);
  return {
    dataSource,
    clear: async () => {
      await dataSource.query(`TRUNCATE ${tables.join(', ')}`);
    },
    close: async () => {
      await disconnect();
      await database.drop();
    },
  };
}

/**
 * A connection to a test database with the application's entities (and `entities`), not yet
 * migrated: an embedded one's server is started for it and stopped by `disconnect`, which leaves
 * the database itself in place (an application may boot on it next).
 */
export async function connect(
  database: TestDatabase,
  entities: EntityTarget<ObjectLiteral>[] = [],
): Promise<{ dataSource: DataSource; disconnect: () => Promise<void> }> {
  const embedded =
    database.engine === 'pglite' ? await EmbeddedPostgres.start(database.directory) : null;
  const options = embedded
    ? dataSourceOptions(embedded.url, 'pglite', EMBEDDED_POOL_SIZE)
    : dataSourceOptions((database as PostgresTestDatabase).url, 'postgres', 4);
  const dataSource = new DataSource({
    ...options,
    entities: [...(options.entities as string[]), ...(entities as string[])],
  });
  const disconnect = async (): Promise<void> => {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  };
  try {
    await dataSource.initialize();
  } catch (error) {
    await disconnect();
    throw error;
  }
  return { dataSource, disconnect };
}
