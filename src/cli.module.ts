import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { SyncCommandsCommand } from 'src/commands/commands.commands';
import { CommandsModule } from 'src/commands/commands.module';
import { ClockModule } from 'src/common/time/clock';
import { SharedCacheModule } from 'src/common/cache/shared-cache.module';
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
import { BanUserCommand, UnbanUserCommand } from 'src/users/users.commands';
import { UsersModule } from 'src/users/users.module';

/**
 * The admin CLI: the database, Redis (so bans and revocations reach running instances at once), the
 * chat-platform client (for the command sync; the emulator in demo mode) and the commands; no HTTP
 * server.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        RedisModule.forRoot(config.redisUrl, config.redisKeyPrefix),
        SharedCacheModule,
        DatabaseModule,
        EventEmitterModule.forRoot(),
        UsersModule,
        SessionsModule,
        PlatformModule.forRoot(config),
        CommandsModule,
      ],
      providers: [
        CreateTokenCommand,
        BanUserCommand,
        UnbanUserCommand,
        BanSessionCommand,
        ListSessionsCommand,
        PurgeExpiredSessionsCommand,
        SyncCommandsCommand,
      ],
    };
  }
}
