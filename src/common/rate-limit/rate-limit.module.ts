import { type DynamicModule, Global, Module } from '@nestjs/common';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { FailOpenStorage } from 'src/common/rate-limit/fail-open-storage';
import type { RateLimitSettings } from 'src/common/rate-limit/rate-limit-buckets';
import { RateLimitGuard } from 'src/common/rate-limit/rate-limit.guard';
import {
  RATE_LIMIT_OPTIONS,
  RATE_LIMIT_STORAGE,
  RateLimiter,
  type RateLimitOptions,
} from 'src/common/rate-limit/rate-limiter';
import { RedisConnection } from 'src/common/redis/redis.module';

/**
 * Rate limits (docs/rate-limits.md): named buckets on `@nestjs/throttler`'s storage, in Redis when
 * `REDIS_URL` is set (shared by every instance, failing open) and in process otherwise.
 */
@Global()
@Module({})
export class RateLimitModule {
  static forRoot(settings: RateLimitSettings): DynamicModule {
    return {
      module: RateLimitModule,
      providers: [
        {
          provide: RATE_LIMIT_OPTIONS,
          inject: [RedisConnection],
          useFactory: (redis: RedisConnection): RateLimitOptions => ({
            ...settings,
            keyPrefix: `${redis.keyPrefix}rate:`,
          }),
        },
        {
          provide: RATE_LIMIT_STORAGE,
          inject: [RedisConnection],
          useFactory: async (redis: RedisConnection) => {
            if (!redis.client) return new FailOpenStorage(new ThrottlerStorageService());
            // Loaded only with Redis: it loads the Redis client, which a single instance never uses.
            const { ThrottlerStorageRedisService } =
              await import('@nest-lab/throttler-storage-redis');
            return new FailOpenStorage(new ThrottlerStorageRedisService(redis.client));
          },
        },
        RateLimiter,
        RateLimitGuard,
      ],
      exports: [RateLimiter, RateLimitGuard],
    };
  }
}
