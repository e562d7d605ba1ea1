import {
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { databaseConnectionFailure } from 'src/common/startup/startup-failure';
import { AppConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { DatabaseGuard, withRequestBudget } from 'src/database/database-guard';
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

/**
 * Gives every HTTP request its database budget (src/database/database-guard.ts), from its first
 * hook on, so guards' lookups count too. Without an HTTP server (the admin CLI), nothing.
 */
@Injectable()
export class RequestDatabaseBudget implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>() as
      FastifyInstance | undefined;
    if (typeof fastify?.addHook !== 'function') return;
    fastify.addHook('onRequest', (_request, reply, done) => {
      withRequestBudget(() => reply.raw.headersSent, done);
    });
  }
}

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
        // Every wait on this database bounded: statements through the pool's client class,
        // connections through the driver's one way of taking them from the pool.
        const guard = new DatabaseGuard();
        const given = options as DataSourceOptions;
        const extra = (given as { extra?: Record<string, unknown> }).extra;
        const dataSource = new DataSource({
          ...given,
          extra: { ...extra, Client: guard.clientClass() },
        });
        try {
          await dataSource.initialize();
        } catch (error) {
          throw databaseConnectionFailure(error, (options as { url: string }).url);
        }
        const driver = dataSource.driver as unknown as {
          obtainMasterConnection: Parameters<DatabaseGuard['connection']>[0];
        };
        const obtain = driver.obtainMasterConnection.bind(driver);
        driver.obtainMasterConnection = () => guard.connection(obtain);
        const pool = (dataSource.driver as unknown as { master: Pool }).master;
        guard.probeWith(() => pool.query('SELECT 1'));
        const destroy = dataSource.destroy.bind(dataSource);
        dataSource.destroy = () => {
          guard.stop();
          return destroy();
        };
        return dataSource;
      },
    }),
  ],
  providers: [RequestDatabaseBudget],
})
export class DatabaseModule {}
