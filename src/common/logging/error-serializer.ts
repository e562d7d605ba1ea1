import pino from 'pino';

/**
 * Fields of database errors that hold request data: the query's bound values (`parameters` from
 * TypeORM, `params` and `queryOptions` from PGlite) and, in an error PostgreSQL raised (it has a
 * `severity`), the row values it quotes in `detail`, the parameter values `where` can show and
 * the values its message quotes after a colon (`invalid input syntax for type uuid: "…"`). They
 * can carry user input and token hashes, so a log line never shows them; the SQL text, the error
 * code and the rest of the message stay, which is what a diagnosis needs.
 */
const REDACTED_FIELDS = new Set(['parameters', 'params', 'queryOptions']);
const DATABASE_FIELDS = new Set(['detail', 'where', 'internalQuery']);
const DATABASE_TEXT_FIELDS = new Set(['message', 'stack']);
const QUOTED_VALUE = /: "(?:[^"]|"")*"/g;
const MAX_DEPTH = 6;

/**
 * A database error's text without the values it quotes (`invalid input syntax for type uuid:
 * "<what the client sent>"`): for the log, and for traces (src/common/tracing/redacting-exporter.ts).
 */
export function redactQuotedValues(text: string): string {
  return text.replace(QUOTED_VALUE, ': "[redacted]"');
}

/** pino's `err` serializer without the request data that database errors carry. */
export function serializeError(error: unknown): unknown {
  return scrub(pino.stdSerializers.err(error as Error), 0);
}

function scrub(value: unknown, depth: number): unknown {
  if (value instanceof Error) return scrub(pino.stdSerializers.err(value), depth);
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return value;
  if (depth >= MAX_DEPTH) return '[nested]';
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  const plain: Record<string, unknown> = {};
  const fromDatabase = typeof (value as { severity?: unknown }).severity === 'string';
  for (const key in value) {
    // The serializer keeps the original error as `raw`; it would bring back everything removed.
    if (key === 'raw') continue;
    const field = (value as Record<string, unknown>)[key];
    if (REDACTED_FIELDS.has(key) || (fromDatabase && DATABASE_FIELDS.has(key))) {
      plain[key] = '[redacted]';
    } else if (fromDatabase && DATABASE_TEXT_FIELDS.has(key) && typeof field === 'string') {
      plain[key] = redactQuotedValues(field);
    } else {
      plain[key] = scrub(field, depth + 1);
    }
  }
  return plain;
}
