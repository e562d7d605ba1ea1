import type { FastifyInstance } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** No JSON body of this API nests deeper; a deeper one would only exhaust the stack of validators. */
export const MAX_JSON_DEPTH = 64;
const NUL_ESCAPE = '\\u0000';

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

/**
 * The path (`a.0.b`, or `body` for the whole value) of the first string or key holding U+0000,
 * which PostgreSQL refuses in text and jsonb and which no field of this API needs; null when there
 * is none. The value is at most MAX_JSON_DEPTH deep (checked before parsing).
 */
export function nulCharacterPath(value: unknown, path: readonly string[] = []): string | null {
  const here = (): string => (path.length > 0 ? path.join('.') : 'body');
  if (typeof value === 'string') return value.includes('\u0000') ? here() : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key].join('.');
    const found = nulCharacterPath(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Replaces Fastify's `application/json` parser with one that refuses bodies nested too deeply
 * before parsing and strings holding NUL after it (400 BadRequest naming the field), and
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
      // The walk only runs for the rare body whose text holds the escape at all.
      if (!body.includes(NUL_ESCAPE)) {
        void parse(request, body, done);
        return;
      }
      void parse(request, body, (error, value) => {
        const field = error ? null : nulCharacterPath(value);
        if (field === null) {
          done(error, value);
          return;
        }
        const message = `${field} must not contain the NUL character (\\u0000)`;
        done(
          new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
            { field, message },
          ]),
          undefined,
        );
      });
    },
  );
}
