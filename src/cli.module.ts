import {
  type DynamicModule,
  type INestApplicationContext,
  type LogLevel,
  Module,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FEATURE_MODULES } from 'src/app.features';
import { CliError } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import { featureOf } from 'src/common/feature/feature.decorator';
import { ClockModule } from 'src/common/time/clock';
import { MetricsRegistryModule } from 'src/common/metrics/metrics.module';
import { SharedCacheModule } from 'src/common/cache/shared-cache.module';
import { RateLimitModule } from 'src/common/rate-limit/rate-limit.module';
import { RedisModule } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { EmbeddedPostgres } from 'src/database/embedded-postgres';
import { PlatformModule } from 'src/platform/platform.module';

/** The CLI prints what goes wrong; Nest's start-up lines would only hide a command's output. */
export const CLI_LOG_LEVELS: LogLevel[] = ['error', 'warn'];

/**
 * The service's modules as the commands use them: the same feature modules as the application
 * (FEATURE_MODULES, so every setting a module declares is exported and imported), on the database,
 * Redis (so bans and revocations reach running instances at once) and the chat-platform client (the
 * emulator in demo mode); no HTTP server, no scheduled jobs and no metrics listener.
 */
@Module({})
export class CliServicesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliServicesModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        // The CLI records nothing: its platform client and caches count into a registry that is off.
        MetricsRegistryModule.forRoot(false),
        RedisModule.forRoot(config.redisUrl, config.redisKeyPrefix),
        SharedCacheModule,
        // The guild modules the settings engine uses carry the API's guard, which counts requests.
        RateLimitModule.forRoot(config.rateLimits),
        DatabaseModule,
        EventEmitterModule.forRoot(),
        PlatformModule.forRoot(config),
        ...FEATURE_MODULES,
      ],
    };
  }
}

/**
 * The admin CLI's commands: those the feature modules declare (`@Feature({ commands })`), loaded
 * here only (the HTTP service never loads them).
 */
export async function cliCommands(): Promise<Type[]> {
  const declared = await Promise.all(
    FEATURE_MODULES.map((module) => featureOf(module).commands?.() ?? Promise.resolve([])),
  );
  return declared.flat();
}

/**
 * The admin CLI: its commands, which check their arguments and then ask `CliServices` for the
 * services they use; the service's modules (CliServicesModule) start at that first request.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, commands: readonly Type[]): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(config)],
      providers: [
        { provide: CliServices, useValue: new CliServices(() => startServices(config)) },
        ...commands,
      ],
    };
  }
}

/**
 * Starts the service's modules. Beside a service running on the embedded database, they use the
 * database it shares. Any other holder (another CLI command, a service still starting) is named
 * first, in one line: Nest would report the refusal to open it with a stack.
 */
async function startServices(config: AppConfig): Promise<INestApplicationContext> {
  const { database } = config;
  if (database.engine === 'pglite' && database.directory !== null) {
    const holder = EmbeddedPostgres.holder(database.directory);
    if (holder !== null && EmbeddedPostgres.shared(database.directory) === null) {
      throw new CliError(
        `The embedded database in ${database.directory} is in use by process ${holder} (another CLI command, or a service that is still starting); run this command again once it is done, or run the service and the CLI on one PostgreSQL (DATABASE_URL)`,
      );
    }
    config = { ...config, database: { ...database, besideService: true } };
  }
  // The running service serves metrics; a command does not listen. Nor does it play the demo's
  // bot: its reports would take shard 0 over from the service's own demo bot (docs/guild-state.md).
  config = {
    ...config,
    metrics: { ...config.metrics, port: null },
    platform: { ...config.platform, demoBotReporter: false },
  };
  return NestFactory.createApplicationContext(CliServicesModule.forRoot(config), {
    logger: CLI_LOG_LEVELS,
  });
}
