import type { FastifyInstance } from 'fastify';

/**
 * The properties passport sets on every request it authenticates. Declaring them up front keeps
 * Fastify's request objects one shape, so the hot path stays optimised instead of going
 * megamorphic when passport adds them one by one.
 */
const PASSPORT_REQUEST_PROPERTIES = [
  'user',
  'authInfo',
  'login',
  'logIn',
  'logout',
  'logOut',
  'isAuthenticated',
  'isUnauthenticated',
  '_sessionManager',
] as const;

export function preparePassportRequests(fastify: FastifyInstance): void {
  for (const property of PASSPORT_REQUEST_PROPERTIES) {
    fastify.decorateRequest(property, null);
  }
}
