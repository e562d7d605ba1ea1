import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppException } from 'src/common/errors/app.exception';
import { unstorableText, unstorableTextException } from 'src/common/validation/json-body';

/**
 * The 400 for a query string value (or name) holding text the database refuses (NUL, a lone
 * surrogate), or null. Only a percent-escape can put such text in a query value (a request line
 * carries no NUL, and its bytes are read one character each), so a URL without `%` after its `?`
 * is not walked.
 */
export function unstorableQueryException(request: FastifyRequest): AppException | null {
  const start = request.url.indexOf('?');
  if (start === -1 || !request.url.includes('%', start)) return null;
  const found = unstorableText(request.query);
  return found === null ? null : unstorableTextException(found);
}

/**
 * Every route's query strings get the rule bodies get (`registerJsonBodyParser`): text PostgreSQL
 * refuses is answered 400 naming the parameter, before authentication and before any route reads
 * it, so no route can pass it to the database and answer 500.
 */
export function registerQueryTextCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    done(unstorableQueryException(request) ?? undefined);
  });
}
