import { Injectable } from '@nestjs/common';
import { SharedCache } from 'src/common/cache/shared-cache';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/**
 * Platform answers, cached for PLATFORM_CACHE_TTL by default and coalesced: ten concurrent requests
 * for one resource make one platform call.
 */
@Injectable()
export class PlatformCache extends SharedCache {
  constructor(config: AppConfig, redis: RedisConnection) {
    super(redis, config.redisKeyPrefix, {
      namespace: 'platform',
      defaultTtlMs: config.platform.cacheTtlSeconds * 1000,
      maxEntries: 10_000,
    });
  }
}
