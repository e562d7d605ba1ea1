import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from 'src/database/data-source.options';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres } from 'src/database/embedded-postgres';
import { buildDataDirectory, embeddedTemplate } from 'src/database/embedded-template';

const MIGRATIONS = join(__dirname, '..', '..', 'src', 'database', 'migrations');

let preparing: Promise<string> | null = null;

/**
 * An embedded data directory with the application's migrations applied: the initialised template
 * (`embeddedTemplate`) migrated once per set of migrations and kept beside it, so that a test
 * database is a copy that boots with nothing pending instead of one that runs every migration.
 * Keyed by the template and the migrations' text: a changed or added migration makes a new one.
 */
export function migratedTemplate(): Promise<string> {
  preparing ??= prepare().catch((error: unknown) => {
    preparing = null;
    throw error;
  });
  return preparing;
}

async function prepare(): Promise<string> {
  const initialised = await embeddedTemplate();
  const target = `${initialised}-migrated-${migrationsKey(basename(initialised))}`;
  return buildDataDirectory(target, async (directory) => {
    const server = await EmbeddedPostgres.start(directory);
    try {
      const dataSource = new DataSource(
        dataSourceOptions(server.url, 'pglite', EMBEDDED_POOL_SIZE),
      );
      await dataSource.initialize();
      try {
        await dataSource.runMigrations();
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await server.stop();
    }
  });
}

function migrationsKey(template: string): string {
  const hash = createHash('sha256').update(template);
  for (const file of readdirSync(MIGRATIONS).sort()) {
    hash.update(`\0${file}\0`).update(readFileSync(join(MIGRATIONS, file)));
  }
  return hash.digest('hex').slice(0, 16);
}
