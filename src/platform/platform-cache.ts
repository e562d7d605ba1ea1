import { Injectable } from '@nestjs/common';
import { SharedCache } from 'src/common/cache/shared-cache';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import type { Lookup } from 'src/platform/platform.types';

/**
 * A guild the bot cannot see is kept this long: the platform's refusal (403 Missing Access) counts
 * against the bot's invalid-request budget, so it is not asked again every few seconds.
 */
export const GUILD_NOT_FOUND_TTL_MS = 120_000;

/**
 * Platform answers, cached for PLATFORM_CACHE_TTL by default and coalesced: ten concurrent requests
 * for one resource make one platform call. With Redis, an instance re-reads the shared copy after
 * PLATFORM_CACHE_TTL at the latest, so what one instance learns reaches the others within it.
 */
@Injectable()
export class PlatformCache extends SharedCache {
  private readonly ttlMs: number;

  constructor(config: AppConfig, redis: RedisConnection) {
    const ttlMs = config.platform.cacheTtlSeconds * 1000;
    super(redis, config.redisKeyPrefix, {
      namespace: 'platform',
      defaultTtlMs: ttlMs,
      maxEntries: 10_000,
      localTtlMs: ttlMs,
    });
    this.ttlMs = ttlMs;
  }

  /** A lookup's lifetime: "the bot cannot see this guild" far longer than anything else. */
  readonly lookupTtl = (lookup: Lookup<unknown>): number =>
    !lookup.found && lookup.missing === 'guild'
      ? Math.max(GUILD_NOT_FOUND_TTL_MS, this.ttlMs)
      : this.ttlMs;
}
