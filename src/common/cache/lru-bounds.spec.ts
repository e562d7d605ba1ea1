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
    // `max` makes the cache allocate its index arrays (typed arrays as long as the bound) when it
    // is built. Counting the elements of the typed arrays created while a cache is built tells the
    // two forms apart exactly, where memory figures depend on what the process frees meanwhile.
    const reservedBy = (build: () => unknown): number => {
      let elements = 0;
      const originals = { Uint8Array, Uint16Array, Uint32Array };
      for (const [name, original] of Object.entries(originals)) {
        (globalThis as Record<string, unknown>)[name] = new Proxy(original, {
          construct(target, args: unknown[]) {
            if (typeof args[0] === 'number') elements += args[0];
            return Reflect.construct(target, args) as object;
          },
        });
      }
      try {
        build();
      } finally {
        Object.assign(globalThis, originals);
      }
      return elements;
    };
    // eslint-disable-next-line no-restricted-syntax -- the preallocating form, for comparison
    const preallocated = reservedBy(() => new LRUCache<string, number>({ max: 100_000 }));
    const growing = reservedBy(() => new LRUCache<string, number>({ ...entryBound(100_000) }));
    // `max` reserves three arrays of 100,000 indexes; the entry bound, none.
    expect(preallocated).toBe(300_000);
    expect(growing).toBe(0);
  });
});
