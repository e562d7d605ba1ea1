import { SetMetadata } from '@nestjs/common';
import type { RateLimitBucket } from 'src/common/rate-limit/rate-limit-buckets';

export const RATE_LIMIT_KEY = 'rate-limit:buckets';
export const NO_RATE_LIMIT_KEY = 'rate-limit:none';

export interface RouteBucket {
  bucket: RateLimitBucket;
  /**
   * Counts only requests this is true for (e.g. `?refresh=true`, or a body's operation); every
   * request by default. The body is parsed JSON, not yet validated.
   */
  when?: (request: { query?: unknown; body?: unknown }) => boolean;
}

/**
 * Counts the route's requests in a bucket of its own as well as in the general one (`anonymous`
 * or `authenticated`).
 */
export const RateLimit = (bucket: RateLimitBucket, when?: RouteBucket['when']): MethodDecorator =>
  SetMetadata<string, RouteBucket>(RATE_LIMIT_KEY, { bucket, when });

/** Exempts a route or controller from rate limiting (health probes). */
export const NoRateLimit = (): MethodDecorator & ClassDecorator =>
  SetMetadata(NO_RATE_LIMIT_KEY, true);
