import type { FastifyInstance } from 'fastify';

/**
 * The authentication guard sets `request.session` on every request it authenticates. Declaring it up
 * front keeps Fastify's request objects one shape, so the hot path stays optimised instead of
 * going megamorphic when the property is added later.
 */
export function prepareSessionRequests(fastify: FastifyInstance): void {
  fastify.decorateRequest('session', null);
}
