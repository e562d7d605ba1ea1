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
    // The heap and the memory outside it: `max` reserves plain arrays on the heap and typed arrays
    // outside it, and how much lands where depends on the engine's array representation.
    const used = (): number => {
      const { heapUsed, external } = process.memoryUsage();
      return heapUsed + external;
    };
    const heapGrowth = (build: () => unknown): number => {
      collect();
      const before = used();
      const kept = Array.from({ length: 20 }, build);
      collect();
      const growth = used() - before;
      expect(kept).toHaveLength(20);
      return growth;
    };
    // eslint-disable-next-line no-restricted-syntax -- the preallocating form, for comparison
    const preallocated = heapGrowth(() => new LRUCache<string, number>({ max: 100_000 }));
    const growing = heapGrowth(() => new LRUCache<string, number>({ ...entryBound(100_000) }));
    // `max` reserves ≈ 2.8 MB per cache (1.6 MB of plain arrays on the heap, 1.2 MB of typed arrays
    // outside it: 56 MB for 20); the entry bound, next to nothing.
    expect(preallocated).toBeGreaterThan(20_000_000);
    expect(growing).toBeLessThan(2_000_000);
  });
});
