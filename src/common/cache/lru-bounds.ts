import type { LRUCache } from 'lru-cache';

/**
 * lru-cache options that bound a cache to `maxEntries` entries without reserving room for all of
 * them up front. Given `max`, lru-cache allocates its key, value and link arrays for every entry at
 * construction (about 28 bytes an entry: 2.8 MiB for 100,000), memory held from boot whether or
 * not the cache ever fills. Counting entries through `maxSize` bounds the cache the same way and
 * lets the storage grow with use.
 */
export function entryBound<
  K extends NonNullable<unknown>,
  V extends NonNullable<unknown>,
  FC = unknown,
>(
  maxEntries: number,
): Required<Pick<LRUCache.OptionsSizeLimit<K, V, FC>, 'maxSize' | 'sizeCalculation'>> {
  return { maxSize: maxEntries, sizeCalculation: countOne };
}

function countOne(): number {
  return 1;
}
