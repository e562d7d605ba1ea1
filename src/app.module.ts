import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FEATURE_MODULES } from 'src/app.features';
import { ScheduleModule } from '@nestjs/schedule';
import { GuildScopeGuard } from 'src/auth/guild-scope.guard';
import { SessionAuthGuard } from 'src/auth/session-auth.guard';
import { AllExceptionsFilter } from 'src/common/errors/all-exceptions.filter';
import { RateLimitGuard } from 'src/common/rate-limit/rate-limit.guard';
import { RateLimitModule } from 'src/common/rate-limit/rate-limit.module';
import { ClockModule } from 'src/common/time/clock';
import { MetricsRegistryModule } from 'src/common/metrics/metrics.module';
import { SharedCacheModule } from 'src/common/cache/shared-cache.module';
import { RedisModule } from 'src/common/redis/redis.module';
import { AppValidationPipe } from 'src/common/validation/app-validation.pipe';
import { AppConfig } from 'src/config/app-config';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { PlatformModule } from 'src/platform/platform.module';

/** The application root: built from an already validated configuration. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        MetricsRegistryModule.forRoot(config.metrics.port !== null),
        RedisModule.forRoot(config.redisUrl, config.redisKeyPrefix),
        SharedCacheModule,
        RateLimitModule.forRoot(config.rateLimits),
        DatabaseModule,
        ScheduleModule.forRoot(),
        EventEmitterModule.forRoot(),
        PlatformModule.forRoot(config),
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: AppValidationPipe },
        // Authentication first, then a scoped token's guilds: the rate limit counts authenticated
        // requests per user. With limits off (RATE_LIMITS_ENABLED=false) its guard is not
        // registered at all.
        { provide: APP_GUARD, useExisting: SessionAuthGuard },
        { provide: APP_GUARD, useExisting: GuildScopeGuard },
        ...(config.rateLimits.enabled ? [{ provide: APP_GUARD, useExisting: RateLimitGuard }] : []),
      ],
    };
  }
}
