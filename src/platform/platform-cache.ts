import type { SharedCache } from 'src/common/cache/shared-cache';
import type { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import type { AppConfig } from 'src/config/app-config';
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
 * Injected as `@Inject(PLATFORM_CACHE) cache: SharedCache`.
 */
export const PLATFORM_CACHE = Symbol('PLATFORM_CACHE');

export function createPlatformCache(caches: SharedCacheFactory, config: AppConfig): SharedCache {
  const ttlMs = config.platform.cacheTtlSeconds * 1000;
  return caches.create({
    namespace: 'platform',
    defaultTtlMs: ttlMs,
    maxEntries: 10_000,
    localTtlMs: ttlMs,
  });
}

/** A lookup's lifetime: "the bot cannot see this guild" far longer than anything else. */
export function lookupTtl(config: AppConfig): (lookup: Lookup<unknown>) => number {
  const ttlMs = config.platform.cacheTtlSeconds * 1000;
  return (lookup) =>
    !lookup.found && lookup.missing === 'guild' ? Math.max(GUILD_NOT_FOUND_TTL_MS, ttlMs) : ttlMs;
}
