/** One entity tag of an `If-None-Match` list: `"x"` or `W/"x"` (RFC 9110 §8.8.3). */
const ENTITY_TAG = /\s*(?:W\/)?("[^"]*")\s*(?:,|$)/gy;

/**
 * Whether an `If-None-Match` header matches the current `etag`, so that a GET or HEAD answers 304
 * (RFC 9110 §13.1.2, weak comparison). The request's `Cache-Control` plays no part: `no-cache`
 * addresses caches, and `fetch()` adds it to every request carrying `If-None-Match`.
 */
export function ifNoneMatchMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const wanted = opaqueTag(etag);
  ENTITY_TAG.lastIndex = 0;
  for (let match = ENTITY_TAG.exec(value); match; match = ENTITY_TAG.exec(value)) {
    if (match[1] === wanted) return true;
    if (ENTITY_TAG.lastIndex >= value.length) break;
  }
  return false;
}

/** The quoted part of a tag, without a weakness prefix. */
function opaqueTag(etag: string): string {
  return etag.startsWith('W/') ? etag.slice(2) : etag;
}
