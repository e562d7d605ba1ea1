import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What the storage answers for one count (the throttler names it only internally). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** How often a storage outage is logged while it lasts. */
const LOG_EVERY_MS = 30_000;

/**
 * Rate-limit counters that never fail a request: when the storage (Redis) cannot answer, the
 * request is let through uncounted and the outage is logged; `/readyz` reports Redis meanwhile.
 */
export class FailOpenStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimits');
  private lastLoggedAt = 0;

  constructor(private readonly inner: ThrottlerStorage) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    try {
      return await this.inner.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (error) {
      this.logOutage(error as Error);
      return {
        totalHits: 0,
        timeToExpire: Math.ceil(ttl / 1000),
        isBlocked: false,
        timeToBlockExpire: 0,
      };
    }
  }

  private logOutage(error: Error): void {
    const now = Date.now();
    if (now - this.lastLoggedAt < LOG_EVERY_MS) return;
    this.lastLoggedAt = now;
    this.logger.warn(
      { reason: error.message },
      'Rate-limit counters unavailable; requests are served without limits',
    );
  }
}
