import type { FastifyInstance } from 'fastify';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's session: set by the authentication guard, null on a public route. */
    session: AuthenticatedSession | null;
  }
}

/**
 * The authentication guard sets `request.session` on every request it authenticates. Declaring it up
 * front keeps Fastify's request objects one shape, so the hot path stays optimised instead of
 * going megamorphic when the property is added later.
 */
export function prepareSessionRequests(fastify: FastifyInstance): void {
  fastify.decorateRequest('session', null);
}
