import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/** Cached settings data lives at most this long even without a change. */
const TTL_MS = 60_000;
/** One View answer can be about 1 MB: memory is bounded by bytes, not only by entries. */
const MAX_BYTES = 64 * 1024 * 1024;

/** Encoded answers are a second, process-local copy: bounded on their own. */
const MAX_ENCODED_BYTES = 32 * 1024 * 1024;

/** The cache of one guild at one settings version: one version read serves a whole request. */
export interface GuildSettingsCache {
  /** The guild's settings version it reads at; null when it could not be read (nothing cached). */
  readonly version: string | null;
  get<T>(key: string, loader: () => Promise<T>): Promise<T>;
  /**
   * Text cached as above and also kept in this process as its UTF-8 bytes, for answers sent as
   * they are: a large View is then written to the socket without being encoded again per read.
   */
  getEncoded(key: string, loader: () => Promise<string>): Promise<Buffer>;
}

/**
 * What the engine reads per request for a guild (permission entries, a member's overrides, View
 * results), cached under the guild's settings version: any change to any setting of the guild
 * moves the version on every instance (Redis INCR, or in process without Redis), so nothing stale
 * is served. If the version cannot be read, the cache is bypassed.
 */
@Injectable()
export class SettingsCache {
  private readonly logger = new Logger(SettingsCache.name);
  private readonly cache: SharedCache;
  private readonly encoded = new LRUCache<string, Buffer>({
    ttl: TTL_MS,
    maxSize: MAX_ENCODED_BYTES,
    sizeCalculation: (bytes, key) => bytes.length + key.length,
  });
  private readonly localVersions = new Map<string, number>();
  private readonly versionPrefix: string;

  constructor(
    private readonly redis: RedisConnection,
    caches: SharedCacheFactory,
    config: AppConfig,
  ) {
    this.versionPrefix = `${config.redisKeyPrefix}settings-version:`;
    this.cache = caches.create({
      namespace: 'settings',
      defaultTtlMs: TTL_MS,
      maxBytes: MAX_BYTES,
      // Entries are versioned, so every instance may keep copies.
    });
  }

  /** The guild's cache at its current version; without a readable version, a pass-through. */
  async forGuild(guildId: string): Promise<GuildSettingsCache> {
    return this.atVersion(guildId, await this.version(guildId));
  }

  private atVersion(guildId: string, version: string | null): GuildSettingsCache {
    const versioned = (key: string): string => `${guildId}:${version}:${key}`;
    const get = <T>(key: string, loader: () => Promise<T>): Promise<T> =>
      version === null ? loader() : this.cache.getOrLoad(versioned(key), loader);
    return {
      version,
      get,
      getEncoded: async (key, loader) => {
        if (version === null) return Buffer.from(await loader());
        const hit = this.encoded.get(versioned(key));
        if (hit) return hit;
        const bytes = Buffer.from(await get(key, loader));
        this.encoded.set(versioned(key), bytes);
        return bytes;
      },
    };
  }

  /** Called after a change to the guild's settings has been committed. */
  async changed(guildId: string): Promise<void> {
    this.localVersions.set(guildId, (this.localVersions.get(guildId) ?? 0) + 1);
    const client = this.redis.client;
    if (!client) return;
    try {
      await client.incr(this.versionPrefix + guildId);
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Could not publish a settings change');
    }
  }

  private async version(guildId: string): Promise<string | null> {
    const client = this.redis.client;
    if (!client) return String(this.localVersions.get(guildId) ?? 0);
    try {
      return (await client.get(this.versionPrefix + guildId)) ?? '0';
    } catch {
      return null;
    }
  }
}
