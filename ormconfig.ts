import { DataSource } from 'typeorm';
import { loadConfig, readProcessEnvironment } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';

/**
 * The TypeORM CLI data source (`npm run typeorm -- <command>`), built from the same configuration
 * and options as the application. The CLI works against PostgreSQL (`DATABASE_URL=postgres://…`);
 * the embedded database is migrated by the service itself at boot.
 */
function cliDataSource(): DataSource {
  const { database } = loadConfig(readProcessEnvironment());
  if (database.engine !== 'postgres') {
    throw new Error(
      'The TypeORM CLI needs DATABASE_URL=postgres://…; the embedded database migrates itself at boot',
    );
  }
  return new DataSource(dataSourceOptions(database.url, 'postgres', database.poolSize));
}

export const dataSource = cliDataSource();
