import { SharedCache } from 'src/common/cache/shared-cache';
import type { RedisConnection } from 'src/common/redis/redis.module';

const NO_REDIS = { client: null } as unknown as RedisConnection;

function cache(): SharedCache {
  return new SharedCache(NO_REDIS, 'test:', {
    namespace: 'spec',
    defaultTtlMs: 60_000,
    maxEntries: 10,
  });
}

/** An in-process cache whose lifetimes (5 s by default) run on `now`. */
function clockedCache(now: () => number): SharedCache {
  return new SharedCache(NO_REDIS, 'test:', {
    namespace: 'spec',
    defaultTtlMs: 5_000,
    maxEntries: 10,
    now,
  });
}

/** A loader whose calls the test finishes, one by one, with values of its choosing. */
function controlledLoader(): { loader: () => Promise<number>; calls: ((value: number) => void)[] } {
  const calls: ((value: number) => void)[] = [];
  return { calls, loader: () => new Promise<number>((resolve) => calls.push(resolve)) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SharedCache (in process)', () => {
  it('shares one load between concurrent callers and serves the cached value after', async () => {
    const shared = cache();
    const { loader, calls } = controlledLoader();
    const waiting = Promise.all([1, 2, 3].map(() => shared.getOrLoad('k', loader)));
    await settle();
    calls[0](42);
    expect(await waiting).toEqual([42, 42, 42]);
    expect(await shared.getOrLoad('k', loader)).toBe(42);
    expect(calls).toHaveLength(1);
  });

  it('loads again for the callers waiting when the key is deleted mid-load', async () => {
    const shared = cache();
    const { loader, calls } = controlledLoader();
    const waiting = Promise.all([shared.getOrLoad('k', loader), shared.getOrLoad('k', loader)]);
    await settle();
    // A change lands while the first load runs: its value is stale, and callers get the new one.
    await shared.delete('k');
    await settle();
    expect(calls).toHaveLength(2);
    calls[0](1);
    calls[1](2);
    expect(await waiting).toEqual([2, 2]);
    expect(await shared.getOrLoad('k', loader)).toBe(2);
  });

  it("passes on the loader's own failure and caches nothing", async () => {
    const shared = cache();
    await expect(
      shared.getOrLoad('k', () => Promise.reject(new Error('platform down'))),
    ).rejects.toThrow('platform down');
    expect(await shared.getOrLoad('k', () => Promise.resolve('fresh'))).toBe('fresh');
  });

  it('loads for itself, uncached, under a stream of invalidations', async () => {
    const shared = cache();
    const { loader, calls } = controlledLoader();
    const waiting = shared.getOrLoad('k', loader);
    // Every cached load is overtaken by a change.
    for (let i = 0; i < 3; i++) {
      await settle();
      await shared.delete('k');
    }
    await settle();
    expect(calls).toHaveLength(4);
    calls.forEach((finish, i) => finish(i));
    expect(await waiting).toBe(3);
  });
});

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let time = 1_000_000;
  return { now: () => time, advance: (ms) => (time += ms) };
}

/** Enough of a Redis client for the cache: GET, SET … PX, DEL, with expiry on the same clock. */
function fakeRedis(clock: { now: () => number }): RedisConnection {
  const data = new Map<string, { value: string; expiresAt: number }>();
  const client = {
    get: (key: string) => {
      const entry = data.get(key);
      return Promise.resolve(entry && entry.expiresAt > clock.now() ? entry.value : null);
    },
    set: (key: string, value: string, _px: 'PX', ttl: number) => {
      data.set(key, { value, expiresAt: clock.now() + ttl });
      return Promise.resolve('OK');
    },
    del: (...keys: string[]) => {
      keys.forEach((key) => data.delete(key));
      return Promise.resolve(keys.length);
    },
  };
  return { client } as unknown as RedisConnection;
}

const counting = <T>(value: T): { loader: () => Promise<T>; calls: () => number } => {
  let calls = 0;
  return {
    loader: () => {
      calls += 1;
      return Promise.resolve(value);
    },
    calls: () => calls,
  };
};

describe('SharedCache lifetimes', () => {
  it('keeps each value for the lifetime its own TTL function gives it', async () => {
    const clock = manualClock();
    const shared = clockedCache(clock.now);
    // "Not found" answers are kept far longer than found ones.
    const ttlMs = (value: { found: boolean }): number => (value.found ? 5_000 : 60_000);
    const found = counting({ found: true });
    const missing = counting({ found: false });
    await shared.getOrLoad('found', found.loader, { ttlMs });
    await shared.getOrLoad('missing', missing.loader, { ttlMs });
    clock.advance(10_000);
    await shared.getOrLoad('found', found.loader, { ttlMs });
    await shared.getOrLoad('missing', missing.loader, { ttlMs });
    expect([found.calls(), missing.calls()]).toEqual([2, 1]);
    clock.advance(55_000);
    await shared.getOrLoad('missing', missing.loader, { ttlMs });
    expect(missing.calls()).toBe(2);
  });

  it('serves a value stored with set() without loading, for the TTL given', async () => {
    const clock = manualClock();
    const shared = clockedCache(clock.now);
    await shared.set('k', 'stored', 30_000);
    const load = counting('loaded');
    expect(await shared.getOrLoad('k', load.loader)).toBe('stored');
    clock.advance(31_000);
    expect(await shared.getOrLoad('k', load.loader)).toBe('loaded');
    expect(load.calls()).toBe(1);
  });

  it('with Redis, trusts its in-memory copy for localTtlMs only, then reads the shared one', async () => {
    const clock = manualClock();
    const redis = fakeRedis(clock);
    const settings = {
      namespace: 'spec',
      defaultTtlMs: 60_000,
      maxEntries: 10,
      localTtlMs: 5_000,
      now: clock.now,
    };
    const first = new SharedCache(redis, 'test:', settings);
    const second = new SharedCache(redis, 'test:', settings);
    const load = counting('original');
    expect(await second.getOrLoad('k', load.loader)).toBe('original');
    // Another instance writes a newer value to the shared copy.
    await first.set('k', 'updated', 60_000);
    expect(await second.getOrLoad('k', load.loader)).toBe('original');
    clock.advance(6_000);
    expect(await second.getOrLoad('k', load.loader)).toBe('updated');
    expect(load.calls()).toBe(1);
  });
});

describe('SharedCache memory hits', () => {
  const fresh = (): Promise<string> => Promise.resolve('loaded again');

  it('answers a fresh value from memory, null and "not found" answers included', async () => {
    const clock = manualClock();
    const shared = clockedCache(clock.now);
    await shared.getOrLoad('k', () => Promise.resolve({ found: false }));
    await shared.getOrLoad('nothing', () => Promise.resolve(null));
    expect(await shared.getOrLoad('k', fresh)).toEqual({ found: false });
    expect(await shared.getOrLoad('nothing', fresh)).toBeNull();
    await shared.delete('k');
    expect(await shared.getOrLoad('k', fresh)).toBe('loaded again');
    await shared.set('k', 'stored', 1_000);
    expect(await shared.getOrLoad('k', fresh)).toBe('stored');
    clock.advance(1_001);
    expect(await shared.getOrLoad('k', fresh)).toBe('loaded again');
  });

  it('with Redis, answers from memory only when the cache keeps local copies', async () => {
    const clock = manualClock();
    const redis = fakeRedis(clock);
    const settings = { namespace: 'spec', defaultTtlMs: 60_000, maxEntries: 10, now: clock.now };
    const local = new SharedCache(redis, 'test:', settings);
    const sharedOnly = new SharedCache(redis, 'test:', { ...settings, localCopyWhenShared: false });
    await local.getOrLoad('k', () => Promise.resolve('value'));
    await sharedOnly.getOrLoad('k', () => Promise.resolve('value'));
    // Changed in Redis behind both: only the one without local copies sees it.
    await redis.client!.set('test:spec:k', JSON.stringify('changed'), 'PX', 60_000);
    expect(await local.getOrLoad('k', fresh)).toBe('value');
    expect(await sharedOnly.getOrLoad('k', fresh)).toBe('changed');
  });
});

describe('SharedCache size bound', () => {
  const bounded = (): SharedCache =>
    new SharedCache(NO_REDIS, 'test:', {
      namespace: 'spec',
      defaultTtlMs: 60_000,
      maxBytes: 1_000,
    });

  it('evicts the least recently used entries once their bytes exceed the bound', async () => {
    const shared = bounded();
    const loads = ['a', 'b', 'c'].map((name) => counting(name.repeat(400)));
    for (const [i, key] of ['a', 'b', 'c'].entries()) await shared.getOrLoad(key, loads[i].loader);
    // 3 × 400 characters do not fit in 1,000 bytes: "a", the oldest, went.
    for (const [i, key] of ['c', 'b', 'a'].entries()) {
      await shared.getOrLoad(key, loads[2 - i].loader);
    }
    expect(loads.map((load) => load.calls())).toEqual([2, 1, 1]);
  });

  it('sizes other values by their JSON', async () => {
    const shared = bounded();
    const big = counting({ rows: 'x'.repeat(600) });
    const other = counting({ rows: 'y'.repeat(600) });
    await shared.getOrLoad('big', big.loader);
    await shared.getOrLoad('other', other.loader);
    await shared.getOrLoad('big', big.loader);
    expect(big.calls()).toBe(2);
  });

  it('serves a value larger than the bound without keeping it', async () => {
    const shared = bounded();
    const huge = counting('z'.repeat(5_000));
    expect(await shared.getOrLoad('huge', huge.loader)).toHaveLength(5_000);
    expect(await shared.getOrLoad('huge', huge.loader)).toHaveLength(5_000);
    expect(huge.calls()).toBe(2);
  });
});
