import { Logger } from '@nestjs/common';
import type { Metrics } from 'src/common/metrics/metrics';
import { LRUCache } from 'lru-cache';
import { SingleFlight } from 'src/common/async/single-flight';
import { entryBound } from 'src/common/cache/lru-bounds';
import type { RedisConnection } from 'src/common/redis/redis.module';

export interface CacheOptions<T = unknown> {
  /**
   * Lifetime of this entry in ms (default: the cache's), or a function of the loaded value, e.g. so
   * that "not found" answers are kept longer than found ones.
   */
  ttlMs?: number | ((value: T) => number);
  /** Load afresh, ignoring what is cached, and cache the result. */
  refresh?: boolean;
}

/**
 * What bounds the in-memory copies, the least recently used going first: a number of entries, or
 * bytes (strings by length, other values by their JSON length, measured once when stored).
 */
export type SharedCacheBound =
  { maxEntries: number; maxBytes?: never } | { maxBytes: number; maxEntries?: never };

export type SharedCacheSettings = SharedCacheBound & {
  /** Redis keys are `${REDIS_KEY_PREFIX}${namespace}:${key}`. */
  namespace: string;
  defaultTtlMs: number;
  /**
   * With Redis, how long an in-memory copy is trusted before the shared copy is read again (at most
   * the entry's own lifetime), so a value another instance `set()` reaches every instance in this
   * time. Without Redis the memory is the only copy and keeps the entry's full lifetime.
   */
  localTtlMs?: number;
  /**
   * With Redis, whether each instance also keeps a copy in memory (default true). Without a local
   * copy, `delete` on one instance takes effect on every instance at once.
   */
  localCopyWhenShared?: boolean;
  /** The clock of the in-memory lifetimes (tests). */
  now?: () => number;
};

/** A loader's own failure, told apart from a fetch aborted because its key was invalidated. */
class LoaderFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('the cache loader failed');
  }
}

/** After this many loads overtaken by `delete` in a row, a caller loads for itself, uncached. */
const MAX_INVALIDATED_LOADS = 3;

interface LoadContext {
  loader: () => Promise<unknown>;
  ttl: (value: unknown) => number;
  refresh: boolean;
}

/** What memory holds per key: the value and, under a byte bound, its size. */
interface Entry {
  value: unknown;
  size: number;
}

/**
 * A short-lived cache with request coalescing: concurrent requests for one key share one load.
 * Kept in process, and shared between instances through Redis when `REDIS_URL` is set; Redis
 * trouble only costs a load, never a failed request. Values must survive JSON.
 */
export class SharedCache {
  private readonly logger: Logger;
  private readonly redisPrefix: string;
  private readonly defaultTtlMs: number;
  private readonly memory: LRUCache<string, Entry, LoadContext>;
  private readonly localCopyWhenShared: boolean;
  private readonly localTtlMs: number | undefined;
  private readonly sized: boolean;
  /** Loads under way when there is no local copy: concurrent requests still share one load. */
  private readonly inFlight = new SingleFlight<unknown>();

  private readonly namespace: string;

  constructor(
    private readonly redis: RedisConnection,
    redisKeyPrefix: string,
    settings: SharedCacheSettings,
    /** Where lookups are counted, hits and misses, by namespace. */
    private readonly metrics?: Metrics,
  ) {
    this.namespace = settings.namespace;
    this.logger = new Logger(`SharedCache:${settings.namespace}`);
    this.redisPrefix = `${redisKeyPrefix}${settings.namespace}:`;
    this.defaultTtlMs = settings.defaultTtlMs;
    this.localCopyWhenShared = settings.localCopyWhenShared ?? true;
    this.localTtlMs = settings.localTtlMs;
    this.sized = settings.maxBytes !== undefined;
    this.memory = new LRUCache<string, Entry, LoadContext>({
      ttl: settings.defaultTtlMs,
      ...(settings.maxBytes !== undefined
        ? { maxSize: settings.maxBytes, sizeCalculation: (entry: Entry) => entry.size }
        : entryBound<string, Entry, LoadContext>(settings.maxEntries)),
      ...(settings.now ? { perf: { now: settings.now }, ttlResolution: 0 } : {}),
      // lru-cache coalesces concurrent fetches of one key into this one call.
      fetchMethod: async (key, _stale, { context, options }) => {
        let value: unknown;
        try {
          value = await this.load(key, context);
        } catch (error) {
          throw new LoaderFailure(error);
        }
        // The lifetime may depend on the value: lru-cache stores the entry with this ttl.
        options.ttl = this.memoryTtl(context.ttl(value));
        return this.entry(key, value);
      },
    });
  }

  /**
   * The cached value for `key`, loaded with `loader` when missing or expired. `ttlMs` overrides the
   * default lifetime for this key; `refresh` skips both cache levels and stores a fresh load.
   */
  async getOrLoad<T>(
    key: string,
    loader: () => Promise<T>,
    options: CacheOptions<T> = {},
  ): Promise<T> {
    if (options.refresh !== true) {
      const hit = this.memoryHit<T>(key);
      if (hit !== undefined) return hit;
    }
    const { ttlMs = this.defaultTtlMs } = options;
    const ttl = (typeof ttlMs === 'number' ? () => ttlMs : ttlMs) as (value: unknown) => number;
    // A miss is a lookup that ran its loader; one served by a load under way, or by Redis, is a hit.
    let loaded = false;
    const context = {
      loader: () => {
        loaded = true;
        return loader();
      },
      ttl,
      refresh: options.refresh === true,
    };
    try {
      if (this.redis.client && !this.localCopyWhenShared) {
        return (await this.loadShared(key, context)) as T;
      }
      return (await this.fetchLocal(key, context)) as T;
    } finally {
      this.metrics?.cacheLookup(this.namespace, !loaded);
    }
  }

  /**
   * A coalesced load through the in-memory cache. A `delete` while the load is under way aborts it
   * (its value may predate the change): the callers waiting on it then load again, and under a
   * stream of changes eventually load for themselves without the cache.
   */
  private async fetchLocal(key: string, context: LoadContext): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        const entry = await this.memory.fetch(key, { context, forceRefresh: context.refresh });
        return entry?.value;
      } catch (error) {
        if (error instanceof LoaderFailure) throw error.cause;
        if (attempt >= MAX_INVALIDATED_LOADS) return this.load(key, context);
      }
    }
  }

  /**
   * The fresh value in memory for `key`, when reads are answered from memory (always without
   * Redis; with it, unless the cache keeps no local copies): `getOrLoad`'s common case, without
   * fetch()'s promises and options. Undefined when it is not there (a cached value is JSON, so
   * never undefined itself).
   */
  private memoryHit<T>(key: string): T | undefined {
    if (!this.localCopyWhenShared && this.redis.client) return undefined;
    const hit = this.memory.get(key);
    if (!hit) return undefined;
    this.metrics?.cacheLookup(this.namespace, true);
    return hit.value as T;
  }

  /** What is cached for `key` (in memory, else the shared copy), without loading anything. */
  async peek<T>(key: string): Promise<T | undefined> {
    const hit = this.memory.get(key);
    if (hit) return hit.value as T;
    const client = this.redis.client;
    if (!client) return undefined;
    try {
      const shared = await client.get(this.redisPrefix + key);
      return shared === null ? undefined : (JSON.parse(shared) as T);
    } catch (error) {
      this.logger.debug({ reason: (error as Error).message }, 'Shared cache read failed');
      return undefined;
    }
  }

  /**
   * Stores `value` under `key` for `ttlMs`, here and, with Redis, for every instance (which see it
   * once their own copy is past `localTtlMs`).
   */
  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    if (this.localCopyWhenShared || !this.redis.client) {
      this.memory.set(key, this.entry(key, value), { ttl: this.memoryTtl(ttlMs) });
    }
    try {
      await this.redis.client?.set(this.redisPrefix + key, JSON.stringify(value), 'PX', ttlMs);
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Shared cache write failed');
    }
  }

  /** Forgets `key` here and, with Redis, on every instance. */
  async delete(key: string): Promise<void> {
    this.memory.delete(key);
    try {
      await this.redis.client?.del(this.redisPrefix + key);
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Shared cache delete failed');
    }
  }

  private memoryTtl(ttlMs: number): number {
    const ttl = Math.max(1, Math.round(ttlMs));
    return this.redis.client && this.localTtlMs !== undefined
      ? Math.min(ttl, this.localTtlMs)
      : ttl;
  }

  private entry(key: string, value: unknown): Entry {
    return { value, size: this.sized ? key.length + sizeOf(value) : 1 };
  }

  private loadShared(key: string, context: LoadContext): Promise<unknown> {
    return this.inFlight.run(key, () => this.load(key, context));
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
      await client.set(redisKey, JSON.stringify(value), 'PX', ttl(value));
    } catch (error) {
      this.logger.debug({ reason: (error as Error).message }, 'Shared cache write failed');
    }
    return value;
  }
}

/** Bytes a value takes, roughly and cheaply: a string's length, or the length of its JSON. */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return Math.max(1, value.length);
  return Math.max(1, JSON.stringify(value)?.length ?? 1);
}
