import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { REQUEST_ID_HEADER } from 'src/common/http/request-id';

/**
 * Any origin may call the API: tokens travel in the Authorization header, never in cookies, so a
 * page on another origin can do nothing a script holding the token could not.
 */
export const CORS_OPTIONS = {
  origin: '*',
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  // One string: the plugin would join a list again on every response.
  exposedHeaders: [
    REQUEST_ID_HEADER,
    'ETag',
    'Retry-After',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-RateLimit-Bucket',
  ].join(', '),
} as const satisfies FastifyCorsOptions;

/**
 * The headers @fastify/cors gives every answer that is not a preflight, under CORS_OPTIONS. With
 * a fixed origin they never change, so they are set with the request id (`withCorsHeaders`)
 * rather than by the plugin's hook, which rebuilds its options on every request: that hook cost
 * `GET /config` about a tenth of its throughput. A unit test holds them equal to what the plugin
 * sends.
 */
export const SIMPLE_CORS_HEADERS: readonly (readonly [string, string])[] = [
  ['access-control-allow-origin', CORS_OPTIONS.origin],
  ['access-control-expose-headers', CORS_OPTIONS.exposedHeaders],
];

export function withCorsHeaders(reply: FastifyReply): void {
  for (const [name, value] of SIMPLE_CORS_HEADERS) void reply.header(name, value);
}

/**
 * Preflights (`OPTIONS` on any path) are answered by @fastify/cors, registered in a context of its
 * own: its hook then runs for its own `OPTIONS *` route only, not for every API request.
 */
export async function registerCorsPreflight(fastify: FastifyInstance): Promise<void> {
  await fastify.register(async (preflight) => {
    await preflight.register(fastifyCors, CORS_OPTIONS);
  });
}
