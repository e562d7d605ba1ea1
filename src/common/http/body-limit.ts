import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';

interface BodyLimitConfig {
  bodyLimit?: number;
}

/**
 * A route that takes a larger body than the service's limit (BODY_LIMIT_BYTES), in bytes. Say why
 * beside it: every byte a route takes is memory one request can cost.
 */
export function BodyLimit(bytes: number): MethodDecorator {
  return RouteConfig({ bodyLimit: bytes } satisfies BodyLimitConfig);
}

/** Gives each route declared with `@BodyLimit` its own limit; registered before the routes. */
export function applyRouteBodyLimits(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route: { config?: unknown; bodyLimit?: number }) => {
    const bytes = (route.config as BodyLimitConfig | undefined)?.bodyLimit;
    if (bytes !== undefined) route.bodyLimit = bytes;
  });
}
