import {
  type DynamicModule,
  type INestApplicationContext,
  type LogLevel,
  Module,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { SyncCommandsCommand } from 'src/commands/commands.commands';
import { CommandsModule } from 'src/commands/commands.module';
import { CliError } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
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
import {
  BanSessionCommand,
  CreateTokenCommand,
  ListSessionsCommand,
  PurgeExpiredSessionsCommand,
} from 'src/sessions/sessions.commands';
import { SessionsModule } from 'src/sessions/sessions.module';
import { ExportSettingsCommand, ImportSettingsCommand } from 'src/settings/settings.commands';
import { SettingsModule } from 'src/settings/settings.module';
import { BanUserCommand, UnbanUserCommand } from 'src/users/users.commands';
import { UsersModule } from 'src/users/users.module';

/** The CLI prints what goes wrong; Nest's start-up lines would only hide a command's output. */
export const CLI_LOG_LEVELS: LogLevel[] = ['error', 'warn'];

/**
 * The service's modules the commands use: the database, Redis (so bans and revocations reach
 * running instances at once), the chat-platform client (for the command sync and the settings'
 * guild checks; the emulator in demo mode) and the settings engine; no HTTP server.
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
        UsersModule,
        SessionsModule,
        PlatformModule.forRoot(config),
        CommandsModule,
        SettingsModule,
      ],
    };
  }
}

/**
 * The admin CLI: its commands, which check their arguments and then ask `CliServices` for the
 * services they use; the service's modules (CliServicesModule) start at that first request.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(config)],
      providers: [
        { provide: CliServices, useValue: new CliServices(() => startServices(config)) },
        CreateTokenCommand,
        BanUserCommand,
        UnbanUserCommand,
        BanSessionCommand,
        ListSessionsCommand,
        PurgeExpiredSessionsCommand,
        SyncCommandsCommand,
        ExportSettingsCommand,
        ImportSettingsCommand,
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
  return NestFactory.createApplicationContext(CliServicesModule.forRoot(config), {
    logger: CLI_LOG_LEVELS,
  });
}
