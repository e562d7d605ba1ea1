import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsIntegerText } from 'src/common/validation/integer-text';

/**
 * How list routes page (cases, settings revisions, …): newest first, by a whole-number key that
 * only grows (a case number, a revision number). A page's `next_cursor` is the key of its last
 * row; the next page holds the rows below it, so the cursor stays valid however many rows are
 * added meanwhile. One more row than the page is read: whether another page exists, without
 * counting.
 */

/** The form of a cursor in a query string, as the OpenAPI document publishes it. */
export const PAGE_CURSOR_PATTERN = '^[1-9][0-9]{0,9}$';

/** The optional `cursor` query field: a key from 1 to `max` (the key column's bound). */
export function IsPageCursor(max: number): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ required: false, type: String, pattern: PAGE_CURSOR_PATTERN }),
    IsOptional(),
    IsIntegerText(1, max),
  );
}

/** The optional `limit` query field: rows per page, from 1 to `max`, `fallback` when absent. */
export function IsPageLimit(max: number, fallback: number): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ required: false, type: 'integer', minimum: 1, maximum: max, default: fallback }),
    IsOptional(),
    IsIntegerText(1, max),
  );
}

/** What a repository is asked for: rows below `before` (all when absent), at most `take`. */
export interface PageRequest {
  before: number | undefined;
  take: number;
}

export interface Page<T> {
  rows: T[];
  /** The key to pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * Reads one page: `fetch` is asked for one row more than the page holds, and the page is what
 * fits, with the cursor of the next page (`keyOf` its last row) when that extra row came back.
 * `query` is the route's validated `cursor` and `limit` (text, as query strings carry them).
 */
export async function fetchPage<T>(
  query: { cursor?: string; limit?: string },
  fallbackLimit: number,
  fetch: (request: PageRequest) => Promise<T[]>,
  keyOf: (row: T) => number,
): Promise<Page<T>> {
  const limit = query.limit === undefined ? fallbackLimit : Number(query.limit);
  const before = query.cursor === undefined ? undefined : Number(query.cursor);
  const found = await fetch({ before, take: limit + 1 });
  const rows = found.slice(0, limit);
  const last = rows.at(-1);
  return {
    rows,
    nextCursor: found.length > limit && last !== undefined ? String(keyOf(last)) : null,
  };
}
