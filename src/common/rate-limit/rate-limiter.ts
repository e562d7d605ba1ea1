import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { rateLimitSubject } from 'src/common/net/rate-limit-subject';
import {
  RATE_LIMIT_BUCKETS,
  type RateLimitBucket,
  type RateLimitSettings,
} from 'src/common/rate-limit/rate-limit-buckets';
import { Clock } from 'src/common/time/clock';

export const RATE_LIMIT_OPTIONS = Symbol('RATE_LIMIT_OPTIONS');
/** The throttler storage the counters live in (see RateLimitModule). */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

export interface RateLimitOptions extends RateLimitSettings {
  /** Prefix of every counter key in the storage. */
  readonly keyPrefix: string;
}

/** Where a request stands in one bucket after being counted. */
export interface BucketState {
  bucket: RateLimitBucket;
  limit: number;
  remaining: number;
  /** Seconds until the window (or the block) ends. */
  resetSeconds: number;
  blocked: boolean;
}

interface HeaderTarget {
  header(name: string, value: string | number): unknown;
}

/**
 * Counts requests in named buckets (docs/rate-limits.md) on the throttler's storage (in process, or
 * Redis shared by every instance), and writes the `X-RateLimit-*` headers.
 */
@Injectable()
export class RateLimiter {
  /** Subjects this instance has seen refused, until when (epoch ms): checked without a round trip. */
  private readonly refusedUntil = new LRUCache<string, number>({ ...entryBound(50_000) });

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(RATE_LIMIT_OPTIONS) private readonly options: RateLimitOptions,
    private readonly clock: Clock,
  ) {}

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** The bot's operators (ROOT_USERS), whose feed reports count in operator buckets. */
  get operators(): readonly string[] {
    return this.options.operators;
  }

  /** Counts one request of `who` (a user id or the client IP, as the bucket's scope says). */
  async count(bucket: RateLimitBucket, who: string): Promise<BucketState> {
    const { limit, windowSeconds } = this.options.buckets[bucket];
    const windowMs = windowSeconds * 1000;
    const subject = subjectOf(bucket, who);
    const record = await this.storage.increment(
      `${this.options.keyPrefix}${bucket}:${RATE_LIMIT_BUCKETS[bucket].scope}:${subject}`,
      windowMs,
      limit,
      windowMs,
      bucket,
    );
    if (record.isBlocked) {
      this.refusedUntil.set(
        `${bucket}:${subject}`,
        this.clock.nowMs() + record.timeToBlockExpire * 1000,
      );
    }
    return {
      bucket,
      limit,
      remaining: Math.max(0, limit - record.totalHits),
      resetSeconds: Math.max(0, record.isBlocked ? record.timeToBlockExpire : record.timeToExpire),
      blocked: record.isBlocked,
    };
  }

  /**
   * The state of a subject this instance has already seen refused in `bucket` and whose block has
   * not ended, without counting or asking the storage; undefined otherwise.
   */
  knownRefusal(bucket: RateLimitBucket, who: string): BucketState | undefined {
    const subject = subjectOf(bucket, who);
    const until = this.refusedUntil.get(`${bucket}:${subject}`);
    if (until === undefined) return undefined;
    const resetSeconds = Math.ceil((until - this.clock.nowMs()) / 1000);
    if (resetSeconds <= 0) {
      this.refusedUntil.delete(`${bucket}:${subject}`);
      return undefined;
    }
    const { limit } = this.options.buckets[bucket];
    return { bucket, limit, remaining: 0, resetSeconds, blocked: true };
  }

  /** The headers of the state a client most needs to see; for a refusal also `Retry-After`. */
  writeHeaders(reply: HeaderTarget, state: BucketState): void {
    reply.header('X-RateLimit-Limit', state.limit);
    reply.header('X-RateLimit-Remaining', state.remaining);
    reply.header('X-RateLimit-Reset', state.resetSeconds);
    reply.header('X-RateLimit-Bucket', state.bucket);
    if (state.blocked) reply.header('Retry-After', state.resetSeconds);
  }

  /** The `RateLimited` error for a refused request, carrying its `X-RateLimit-*` and `Retry-After`. */
  refusal(state: BucketState): AppException {
    const error = new AppException(
      ErrorCode.RateLimited,
      `Too many requests (${state.bucket}); retry in ${state.resetSeconds} seconds`,
    );
    const headers: Record<string, string | number> = {};
    this.writeHeaders({ header: (name, value) => (headers[name] = value) }, state);
    error.headers = headers;
    return error;
  }
}

/** Every per-IP bucket counts addresses the same way (an IPv6 client by its /64). */
function subjectOf(bucket: RateLimitBucket, who: string): string {
  return RATE_LIMIT_BUCKETS[bucket].scope === 'ip' ? rateLimitSubject(who) : who;
}

/** The state to report among several: a refusal first, otherwise the one with least left. */
export function mostPressing(states: readonly BucketState[]): BucketState | undefined {
  return [...states].sort(
    (a, b) => Number(b.blocked) - Number(a.blocked) || a.remaining - b.remaining,
  )[0];
}
