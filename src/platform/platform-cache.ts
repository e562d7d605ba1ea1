import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

export interface CacheOptions {
  /** Lifetime of this entry in ms (default PLATFORM_CACHE_TTL). */
  ttlMs?: number;
  /** Load afresh, ignoring what is cached, and cache the result. */
  refresh?: boolean;
}

interface LoadContext {
  loader: () => Promise<unknown>;
  ttl: number;
  refresh: boolean;
}

/** The most entries kept in memory; the oldest are dropped first. */
const MAX_ENTRIES = 10_000;

/**
 * A short-lived cache of platform answers with request coalescing: concurrent requests for one key
 * share one load. Kept in process, and shared between instances through Redis when `REDIS_URL` is
 * set; Redis trouble only costs a platform call, never a failed request.
 */
@Injectable()
export class PlatformCache {
  private readonly logger = new Logger(PlatformCache.name);
  private readonly ttlMs: number;
  private readonly redisPrefix: string;
  private readonly memory: LRUCache<string, { value: unknown }, LoadContext>;

  constructor(
    config: AppConfig,
    private readonly redis: RedisConnection,
  ) {
    this.ttlMs = config.platform.cacheTtlSeconds * 1000;
    this.redisPrefix = `${config.redisKeyPrefix}platform:`;
    this.memory = new LRUCache<string, { value: unknown }, LoadContext>({
      max: MAX_ENTRIES,
      ttl: this.ttlMs,
      // lru-cache coalesces concurrent fetches of one key into this one call.
      fetchMethod: async (key, _stale, { context }) => ({ value: await this.load(key, context) }),
    });
  }

  /**
   * The cached value for `key`, loaded with `loader` when missing or expired. `ttlMs` overrides the
   * default lifetime for this key; `refresh` skips both cache levels and stores a fresh load.
   */
  async getOrLoad<T>(
    key: string,
    loader: () => Promise<T>,
    options: CacheOptions = {},
  ): Promise<T> {
    const ttl = options.ttlMs ?? this.ttlMs;
    const entry = await this.memory.fetch(key, {
      context: { loader, ttl, refresh: options.refresh === true },
      ttl,
      forceRefresh: options.refresh === true,
    });
    return entry?.value as T;
  }

  private async load(key: string, { loader, ttl, refresh }: LoadContext): Promise<unknown> {
    const client = this.redis.client;
    if (!client) return loader();
    const redisKey = this.redisPrefix + key;
    if (!refresh) {
      try {
        const shared = await client.get(redisKey);
        if (shared !== null) return JSON.parse(shared) as unknown;
      } catch (error) {
        this.logger.debug({ reason: (error as Error).message }, 'Shared cache read failed');
      }
    }
    const value = await loader();
    try {
      await client.set(redisKey, JSON.stringify(value), 'PX', ttl);
    } catch (error) {
      this.logger.debug({ reason: (error as Error).message }, 'Shared cache write failed');
    }
    return value;
  }
}
