import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { SyncCommandsCommand } from 'src/commands/commands.commands';
import { CommandsModule } from 'src/commands/commands.module';
import { ClockModule } from 'src/common/time/clock';
import { MetricsRegistryModule } from 'src/common/metrics/metrics.module';
import { SharedCacheModule } from 'src/common/cache/shared-cache.module';
import { RateLimitModule } from 'src/common/rate-limit/rate-limit.module';
import { RedisModule } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
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

/**
 * The admin CLI: the database, Redis (so bans and revocations reach running instances at once), the
 * chat-platform client (for the command sync and the settings' guild checks; the emulator in demo
 * mode), the settings engine (export and import) and the commands; no HTTP server.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
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
      providers: [
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
