import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';

describe('entryBound', () => {
  it('keeps at most the given number of entries, evicting the least recently used', () => {
    const cache = new LRUCache<string, number>({ ...entryBound(3) });
    for (const [i, key] of ['a', 'b', 'c'].entries()) cache.set(key, i);
    cache.get('a');
    cache.set('d', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(cache.size).toBe(3);
  });

  it('reserves no storage up front, unlike `max`', () => {
    // A full collection before each reading, so the growth is what the caches keep alive.
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    // `max` reserves typed arrays (ArrayBuffers) sized by the bound: allocated at once and counted
    // exactly, unlike its plain arrays, whose heap share depends on the engine's representation
    // and on what else a collection frees meanwhile.
    const reserved = (build: () => unknown): number => {
      collect();
      const before = process.memoryUsage().arrayBuffers;
      const kept = Array.from({ length: 40 }, build);
      const growth = process.memoryUsage().arrayBuffers - before;
      expect(kept).toHaveLength(40);
      return growth;
    };
    // eslint-disable-next-line no-restricted-syntax -- the preallocating form, for comparison
    const preallocated = reserved(() => new LRUCache<string, number>({ max: 100_000 }));
    const growing = reserved(() => new LRUCache<string, number>({ ...entryBound(100_000) }));
    // `max` reserves three arrays of 100,000 32-bit indexes per cache, 1.2 MB (48 MB for 40); the
    // entry bound, nothing.
    expect(preallocated).toBeGreaterThan(30_000_000);
    expect(growing).toBeLessThan(1_000_000);
  });
});
