import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { BucketFleet, FleetPlace } from 'src/platform/bucket-queue';

/**
 * How long a place stands if its instance never gives it back (it stopped): longer than any call
 * holds one (its wait for a turn, PLATFORM_TIMEOUT_MS per attempt and the bounded retries and
 * rate-limit waits).
 */
const PLACE_TTL_MS = 60_000;
/** While Redis cannot be reached, its failure is logged at most this often. */
const LOG_INTERVAL_MS = 60_000;

/**
 * Takes a place for one call in a caller's set for one bucket, on Redis's clock: places past their
 * expiry (an instance stopped while holding them) go first; none is taken when the caller already
 * holds the limit.
 *
 * KEYS: the caller's places in the bucket (a sorted set: place id → expiry, ms).
 * ARGV: place id, place lifetime (ms), places a caller may hold.
 * Returns 1 when the place was taken, 0 when refused.
 */
const ENTER = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then redis.call('DEL', KEYS[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[1], now + tonumber(ARGV[2]) + 1, '+inf')
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * The fleet's view of the shared buckets' callers (docs/request-costs.md, "Shared platform
 * buckets"): a caller's calls waiting or under way in a bucket are counted across every instance
 * in Redis, so spreading them over instances does not multiply what one caller may hold. While
 * Redis cannot be reached, each instance's own count decides (the queue's `perCaller`).
 */
export class FleetBucketSlots implements BucketFleet {
  private readonly logger = new Logger(FleetBucketSlots.name);
  private loggedAt = Number.NEGATIVE_INFINITY;
  private seq = 0;
  private readonly instance = randomBytes(6).toString('hex');

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async enter(bucket: string, caller: string, perCaller: number): Promise<FleetPlace | null> {
    const key = `${this.keyPrefix}platform:queue:${bucket}:${caller}`;
    const id = `${this.instance}:${this.seq++}`;
    try {
      const taken = await this.redis.eval(ENTER, 1, key, id, PLACE_TTL_MS, perCaller);
      if (taken !== 1) return null;
    } catch (error) {
      this.warn(error);
      return { leave: () => undefined };
    }
    return {
      leave: () => {
        this.redis.zrem(key, id).catch((error: unknown) => this.warn(error));
      },
    };
  }

  private warn(error: unknown): void {
    const now = performance.now();
    if (now - this.loggedAt < LOG_INTERVAL_MS) return;
    this.loggedAt = now;
    this.logger.warn(
      { reason: (error as Error).message },
      "Platform queues: Redis cannot be reached; each instance bounds a caller's calls on its own",
    );
  }
}
