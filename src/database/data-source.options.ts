import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from 'src/config/app-config';
import { CONNECTION_TIMEOUT_MS, STATEMENT_TIMEOUT_MS } from 'src/database/database-guard';

/**
 * The TypeORM options shared by the application and the TypeORM CLI (`ormconfig.ts`), so both see
 * the same entities and migrations. `synchronize` is never on: the schema changes only through
 * committed migrations.
 */
export function dataSourceOptions(
  url: string,
  engine: DatabaseConfig['engine'],
  poolSize: number,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    // PGlite has no uuid-ossp; gen_random_uuid() is core PostgreSQL since 13.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    applicationName: 'bot-management-service',
    extra: {
      max: poolSize,
      // Waiting for a connection or a query is bounded, so a stuck database fails requests cleanly;
      // the service's client class (src/database/database-guard.ts) also bounds a request's
      // waits in all. A client of the plain class (the TypeORM CLI) gives up with the server.
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      query_timeout: STATEMENT_TIMEOUT_MS,
      // The server ends a statement that runs longer (docs/request-costs.md); PGlite has no timer.
      ...(engine === 'postgres' && { statement_timeout: STATEMENT_TIMEOUT_MS }),
      // The embedded server's single connection is kept open rather than re-established.
      idleTimeoutMillis: engine === 'pglite' ? 0 : 30_000,
    },
  };
}
