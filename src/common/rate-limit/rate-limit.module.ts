import { Global, Module } from '@nestjs/common';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { ThrottlerModule, ThrottlerStorageService } from '@nestjs/throttler';
import { FailOpenStorage } from 'src/common/rate-limit/fail-open-storage';
import { RateLimitGuard } from 'src/common/rate-limit/rate-limit.guard';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import type { RateLimitBucket } from 'src/config/rate-limit-buckets';

/**
 * Rate limits (DESIGN §10): `@nestjs/throttler` with one named throttler per bucket, counting in
 * Redis when `REDIS_URL` is set (shared by every instance, failing open) and in process otherwise.
 */
@Global()
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, RedisConnection],
      useFactory: (config: AppConfig, redis: RedisConnection) => ({
        throttlers: Object.entries(config.rateLimits.buckets).map(([name, budget]) => ({
          name: name as RateLimitBucket,
          limit: budget.limit,
          ttl: budget.windowSeconds * 1000,
        })),
        storage: new FailOpenStorage(
          redis.client
            ? new ThrottlerStorageRedisService(redis.client)
            : new ThrottlerStorageService(),
        ),
      }),
    }),
  ],
  providers: [RateLimiter, RateLimitGuard],
  exports: [RateLimiter, RateLimitGuard],
})
export class RateLimitModule {}
