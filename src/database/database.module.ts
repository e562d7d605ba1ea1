import { Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { databaseConnectionFailure } from 'src/common/startup/startup-failure';
import { AppConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres } from 'src/database/embedded-postgres';

/**
 * Starts the embedded database when no PostgreSQL URL is configured and stops it after TypeORM has
 * closed its pool (Nest shuts modules down in the reverse order of their start).
 */
@Injectable()
export class DatabaseEngine implements OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseEngine.name);
  private embedded: EmbeddedPostgres | null = null;

  constructor(private readonly config: AppConfig) {}

  /**
   * The URL TypeORM connects to: the configured PostgreSQL; beside a running service, the embedded
   * database it shares; otherwise the embedded server, once started.
   */
  async connectionUrl(): Promise<string> {
    const { database } = this.config;
    if (database.engine === 'postgres') return database.url;
    const shared =
      database.besideService && database.directory !== null
        ? EmbeddedPostgres.shared(database.directory)
        : null;
    if (shared !== null) return shared;
    if (!this.embedded) {
      this.embedded = await EmbeddedPostgres.start(database.directory);
      this.logger.log(
        { storage: database.directory ?? 'memory' },
        'Using the embedded PGlite database',
      );
    }
    return this.embedded.url;
  }

  /**
   * Lets admin CLI commands run beside this service use its embedded database (docs/operations.md,
   * "Admin CLI"); called once the service is up.
   */
  shareWithCli(): void {
    this.embedded?.share();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.embedded) return;
    await this.embedded.stop();
    this.embedded = null;
    this.logger.log('Embedded database closed');
  }
}

@Module({ providers: [DatabaseEngine], exports: [DatabaseEngine] })
class DatabaseEngineModule {}

/** TypeORM on PostgreSQL or embedded PGlite; pending migrations run at boot. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      imports: [DatabaseEngineModule],
      inject: [AppConfig, DatabaseEngine],
      useFactory: async (config: AppConfig, engine: DatabaseEngine) => ({
        ...dataSourceOptions(
          await engine.connectionUrl(),
          config.database.engine,
          config.database.engine === 'postgres' ? config.database.poolSize : EMBEDDED_POOL_SIZE,
        ),
        migrationsRun: true,
        // Entities a module registers with TypeOrmModule.forFeature() join the glob's (modules
        // outside src/, such as test fixtures, declare settings this way).
        autoLoadEntities: true,
        // Fail the boot on the first error instead of retrying for minutes, and without a
        // "Retrying" line: main.ts writes the one line that says what is wrong.
        retryAttempts: 0,
        toRetry: () => false,
      }),
      // A server that cannot be reached, a database that does not exist, a refused login: told
      // in words (StartupFailure); anything else as it is.
      dataSourceFactory: async (options) => {
        const dataSource = new DataSource(options as DataSourceOptions);
        try {
          return await dataSource.initialize();
        } catch (error) {
          throw databaseConnectionFailure(error, (options as { url: string }).url);
        }
      },
    }),
  ],
})
export class DatabaseModule {}
