import type { FastifyInstance } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** No JSON body of this API nests deeper; a deeper one would only exhaust the stack of validators. */
export const MAX_JSON_DEPTH = 64;

/**
 * Why a JSON text must be refused before it is parsed, or null: nesting deeper than `maxDepth`,
 * counted in one linear pass with brackets inside strings ignored. The text is not otherwise
 * checked: the parser reports malformed JSON.
 */
export function jsonBodyProblem(text: string, maxDepth = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) {
        i += 1; // The escaped character cannot end the string.
      } else if (char === 0x22 /* " */) {
        inString = false;
      }
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth += 1;
      if (depth > maxDepth) {
        return `The JSON body is nested too deeply: at most ${maxDepth} levels of arrays and objects`;
      }
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth -= 1;
    }
  }
  return null;
}

/** Text PostgreSQL refuses in text and jsonb, and no field of this API needs. */
const UNSTORABLE: readonly { holds: (text: string) => boolean; problem: string }[] = [
  {
    holds: (text) => text.includes('\u0000'),
    problem: 'must not contain the NUL character (\\u0000)',
  },
  // A UTF-16 surrogate without its pair is no character at all.
  {
    holds: (text) => /\p{Cs}/u.test(text),
    problem: 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)',
  },
];
/** The escapes that can produce such text in a JSON body: only then is the parsed body walked. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * The first string or key of a parsed body that holds text the database refuses: its path
 * (`a.0.b`, or `body` for the whole value) and what is wrong; null when there is none. The value is
 * at most MAX_JSON_DEPTH deep (checked before parsing).
 */
export function unstorableText(
  value: unknown,
  path: readonly string[] = [],
): { field: string; problem: string } | null {
  const problemOf = (text: string): string | undefined =>
    UNSTORABLE.find(({ holds }) => holds(text))?.problem;
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { field: path.length > 0 ? path.join('.') : 'body', problem } : null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const problem = problemOf(key);
    if (problem) return { field: [...path, key].join('.'), problem };
    const found = unstorableText(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Keys no body of this API has and that name members of every object: a class-transformer or a
 * lookup by key would take them for `Object.prototype`'s (`__proto__` is refused by the parser).
 */
const RESERVED_KEYS = new Set(['constructor', 'prototype']);
/** A body whose text may hold such a key (quoted, or spelt with escapes): only then is it walked. */
const RESERVED_KEY_TEXT = /"(?:constructor|prototype)"|\\u/;

/** The first object key of a parsed body that is reserved: its path and what is wrong; or null. */
export function reservedKey(
  value: unknown,
  path: readonly string[] = [],
): { field: string; problem: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (RESERVED_KEYS.has(key) && !Array.isArray(value)) {
      return {
        field: [...path, key].join('.'),
        problem: `is not allowed: "${key}" is never a field, setting, column or id of this API`,
      };
    }
    const found = reservedKey(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/** The 400 BadRequest for text the database refuses, naming the field and the character. */
export function unstorableTextException(found: { field: string; problem: string }): AppException {
  const message = `${found.field} ${found.problem}`;
  return new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
    { field: found.field, message },
  ]);
}

/**
 * Replaces Fastify's `application/json` parser with one that refuses bodies nested too deeply
 * before parsing, and text the database refuses or a reserved key (`constructor`, `prototype`)
 * after it (400 BadRequest naming the field), and
 * otherwise parses exactly as Fastify does (secure-json-parse with the instance's
 * prototype-poisoning settings, the same errors for empty or malformed bodies).
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
  const parse = fastify.getDefaultJsonParser(
    onProtoPoisoning ?? 'error',
    onConstructorPoisoning ?? 'error',
  );
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request, body: string, done) => {
      const problem = jsonBodyProblem(body);
      if (problem !== null) {
        done(new AppException(ErrorCode.BadRequest, problem), undefined);
        return;
      }
      // The walks only run for the rare body whose text holds such an escape or key at all.
      const unstorable = UNSTORABLE_ESCAPE.test(body);
      const reserved = RESERVED_KEY_TEXT.test(body);
      if (!unstorable && !reserved) {
        void parse(request, body, done);
        return;
      }
      void parse(request, body, (error, value) => {
        const found = error
          ? null
          : ((unstorable ? unstorableText(value) : null) ?? (reserved ? reservedKey(value) : null));
        if (found === null) {
          done(error, value);
          return;
        }
        done(unstorableTextException(found), undefined);
      });
    },
  );
}
