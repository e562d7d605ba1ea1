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
