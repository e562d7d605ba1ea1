import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
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

/**
 * How long a guild's version key lives in Redis after it was last set: a key that expired (or was
 * evicted, or lost with a restart) is simply replaced by a new version on the next read, so this
 * only bounds how many keys idle guilds leave behind.
 */
const VERSION_KEY_TTL_MS = 60 * 60_000;

/** How often a version that could not be published after a change is published again. */
export const REPUBLISH_INTERVAL_MS = 1_000;

/** Guilds whose change could not be published, remembered for a retry (beyond this, the oldest go). */
const MAX_UNPUBLISHED = 10_000;

/**
 * The guild's version, or a new one when Redis has none (first read, expired, evicted, or a Redis
 * that restarted empty), set in one step so that every instance reads the same one.
 */
const READ_OR_CREATE_VERSION = `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]`;

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
 * gives it a new version on every instance, so nothing stale is served. With Redis a version is a
 * random id, never a count: a Redis that lost its keys (a restart, an eviction) cannot hand out a
 * version that entries cached earlier were stored under (docs/caching.md). If the version cannot
 * be read, or this instance could not publish its last change of the guild, the cache is bypassed.
 */
@Injectable()
export class SettingsCache implements OnModuleDestroy {
  private readonly logger = new Logger(SettingsCache.name);
  private readonly cache: SharedCache;
  private readonly encoded = new LRUCache<string, Buffer>({
    ttl: TTL_MS,
    maxSize: MAX_ENCODED_BYTES,
    sizeCalculation: (bytes, key) => bytes.length + key.length,
  });
  private readonly localVersions = new Map<string, number>();
  /** Guilds changed here whose new version Redis has not taken yet (kept in insertion order). */
  private readonly unpublished = new Set<string>();
  private republishTimer: NodeJS.Timeout | null = null;
  private readonly versionPrefix: string;

  constructor(
    private readonly redis: RedisConnection,
    caches: SharedCacheFactory,
    config: AppConfig,
  ) {
    this.versionPrefix = `${config.redisKeyPrefix}settings-version:`;
    // A connection back is the first moment a missed publish can succeed.
    redis.client?.on('ready', () => {
      if (this.unpublished.size > 0) void this.republish();
    });
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

  /**
   * Called after a change to the guild's settings has been committed. When Redis cannot take the
   * new version, this instance bypasses the guild's cache and publishes it again as soon as its
   * connection is back, and every second, until Redis takes it.
   */
  async changed(guildId: string): Promise<void> {
    this.localVersions.set(guildId, (this.localVersions.get(guildId) ?? 0) + 1);
    if (!this.redis.client) return;
    this.unpublished.delete(guildId);
    if (await this.publish(guildId)) return;
    this.unpublished.add(guildId);
    if (this.unpublished.size > MAX_UNPUBLISHED) {
      this.unpublished.delete(this.unpublished.values().next().value as string);
    }
    this.republishTimer ??= setInterval(() => void this.republish(), REPUBLISH_INTERVAL_MS);
    this.republishTimer.unref();
  }

  onModuleDestroy(): void {
    if (this.republishTimer) clearInterval(this.republishTimer);
    this.republishTimer = null;
  }

  /** Gives the guild a new version in Redis; false when Redis could not take it. */
  private async publish(guildId: string): Promise<boolean> {
    try {
      await this.redis.client?.set(
        this.versionPrefix + guildId,
        randomUUID(),
        'PX',
        VERSION_KEY_TTL_MS,
      );
      return true;
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Could not publish a settings change');
      return false;
    }
  }

  private async republish(): Promise<void> {
    for (const guildId of [...this.unpublished]) {
      if (!(await this.publish(guildId))) return;
      this.unpublished.delete(guildId);
    }
    if (this.unpublished.size === 0 && this.republishTimer) {
      clearInterval(this.republishTimer);
      this.republishTimer = null;
    }
  }

  private async version(guildId: string): Promise<string | null> {
    const client = this.redis.client;
    if (!client) return String(this.localVersions.get(guildId) ?? 0);
    // What is cached under the version Redis holds may predate this instance's own last change.
    if (this.unpublished.has(guildId)) return null;
    try {
      const key = this.versionPrefix + guildId;
      const current = await client.get(key);
      if (current !== null) return current;
      return String(
        await client.eval(READ_OR_CREATE_VERSION, 1, key, randomUUID(), VERSION_KEY_TTL_MS),
      );
    } catch {
      return null;
    }
  }
}
