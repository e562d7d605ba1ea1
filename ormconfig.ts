import { DataSource } from 'typeorm';
import { loadConfig, readProcessEnvironment } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres } from 'src/database/embedded-postgres';

/**
 * The TypeORM CLI data source (`npm run typeorm -- <command>`), built from the same configuration
 * and options as the application. With `DATABASE_URL=postgres://…` it is that database. Without it,
 * a throwaway embedded database with every committed migration applied, so that
 * `migration:generate` and `migration:check` need no server (CONTRIBUTING.md, "A migration"); it
 * stops when the CLI closes its data source.
 */
async function cliDataSource(): Promise<DataSource> {
  const { database } = loadConfig(readProcessEnvironment());
  if (database.engine === 'postgres') {
    return new DataSource(dataSourceOptions(database.url, 'postgres', database.poolSize));
  }
  const embedded = await EmbeddedPostgres.start(null);
  const options = dataSourceOptions(embedded.url, 'pglite', EMBEDDED_POOL_SIZE);
  const migrated = await new DataSource(options).initialize();
  await migrated.runMigrations({ transaction: 'each' });
  await migrated.destroy();
  const dataSource = new DataSource(options);
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = async () => {
    await destroy();
    await embedded.stop();
  };
  return dataSource;
}

export const dataSource = cliDataSource();
