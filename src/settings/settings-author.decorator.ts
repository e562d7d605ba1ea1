import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { authorOf, type SettingsAuthor } from 'src/settings/engine/settings-author';

/**
 * Reads the author of a settings operation from the request's session (set by the
 * authentication guard). Exported so that the test holding session-reading routes to being
 * authenticated recognises this decorator too.
 */
export function readAuthor(_data: unknown, context: ExecutionContext): SettingsAuthor {
  const session = context.switchToHttp().getRequest<FastifyRequest>().session;
  // Only a route without authentication has no session, and such a route must not take this.
  if (!session) throw new Error('@Author() on a route without authentication');
  return authorOf(session);
}

/**
 * The author of the request's settings operations: the user, their session or API token, and the
 * token's scope. A route that takes it must not be `@Public()` (a test holds every route to that).
 */
export const Author = createParamDecorator(readAuthor);
