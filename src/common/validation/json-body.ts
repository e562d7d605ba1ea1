import type { FastifyInstance } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** No JSON body of this API nests deeper; a deeper one would only exhaust the stack of validators. */
export const MAX_JSON_DEPTH = 64;

/**
 * Why a JSON text must be refused before it is parsed, or null: nesting deeper than `maxDepth`
 * (counted in one linear pass, brackets inside strings ignored), or a string holding U+0000, which
 * PostgreSQL refuses in text and jsonb and which no field of this API needs. The text is not
 * otherwise checked: the parser reports malformed JSON.
 */
export function jsonBodyProblem(text: string, maxDepth = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) {
        if (text.startsWith('u0000', i + 1)) {
          return 'JSON strings may not contain the NUL character (\\u0000)';
        }
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
 * Replaces Fastify's `application/json` parser with one that refuses what `jsonBodyProblem`
 * names (400 BadRequest), then parses exactly as Fastify does (secure-json-parse with the
 * instance's prototype-poisoning settings, the same errors for empty or malformed bodies).
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
      void parse(request, body, done);
    },
  );
}
