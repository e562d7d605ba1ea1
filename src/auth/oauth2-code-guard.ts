import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/** Longer than any authorization code lives on the platform. */
const REMEMBER_MS = 10 * 60_000;

/**
 * How long a claim whose exchange is under way stands if its holder never settles it (the
 * instance stopped): longer than an exchange takes (the platform timeout and its retries).
 */
const PENDING_MS = 30_000;

/** How long a second exchange of a code waits for one under way to be settled, and how often it looks. */
const WAIT_FOR_PENDING_MS = 15_000;
const POLL_PENDING_MS = 50;

/** A claim: an exchange under way, or a code spent by a successful one. */
type ClaimState = 'pending' | 'spent';

/**
 * Lets each OAuth2 authorization code be exchanged once, across instances: Redis `SET NX` with a
 * TTL when `REDIS_URL` is set, else (one instance) an in-process store. Codes are kept as hashes.
 * A claim is pending while its exchange is under way: a refused exchange releases it, so a code
 * seen without its verifier cannot be burned, and a second exchange of the code waits for the
 * first to be settled instead of being told the code was used by one that fails.
 */
@Injectable()
export class OAuth2CodeGuard {
  private readonly logger = new Logger(OAuth2CodeGuard.name);
  private readonly local = new LRUCache<string, ClaimState>({
    ...entryBound(100_000),
    ttl: REMEMBER_MS,
  });
  /** Exchanges the platform refused (see `refusal`), by code and verifier. */
  private readonly refusals = new LRUCache<string, OAuth2Refusal>({
    ...entryBound(100_000),
    ttl: REMEMBER_MS,
  });
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisConnection,
    config: AppConfig,
  ) {
    this.prefix = `${config.redisKeyPrefix}oauth2-code:`;
  }

  /**
   * True when the caller now holds the code's claim (the first exchange of it, or one after an
   * exchange that was refused); false once a successful exchange has spent it. While another
   * exchange of the code is under way, waits for it to be settled (at most WAIT_FOR_PENDING_MS).
   */
  async claim(code: string): Promise<boolean> {
    const key = keyOf(code);
    const deadline = Date.now() + WAIT_FOR_PENDING_MS;
    for (;;) {
      const held = await this.take(key);
      if (held === null) return true;
      if (held === 'spent' || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_PENDING_MS));
    }
  }

  /** Marks a claimed code spent: its exchange succeeded, and no other may follow. */
  async spend(code: string): Promise<void> {
    const key = keyOf(code);
    this.local.set(key, 'spent', { ttl: REMEMBER_MS });
    try {
      await this.redis.client?.set(this.prefix + key, 'spent', 'PX', REMEMBER_MS);
    } catch (error) {
      // The pending claim expires; the platform refuses the spent code meanwhile.
      this.warnFallback(error);
    }
  }

  /** Claims the code (null), or answers the claim that stands. */
  private async take(key: string): Promise<ClaimState | null> {
    const client = this.redis.client;
    if (client) {
      try {
        const [set, current] = (await client
          .multi()
          .set(this.prefix + key, 'pending', 'PX', PENDING_MS, 'NX')
          .get(this.prefix + key)
          .exec()) as [[Error | null, string | null], [Error | null, string | null]];
        if (set[1] === 'OK') return null;
        return current[1] === 'spent' ? 'spent' : 'pending';
      } catch (error) {
        // The platform still refuses a reused code; this guard only saves the round trip.
        this.warnFallback(error);
      }
    }
    const current = this.local.get(key);
    if (current !== undefined) return current;
    this.local.set(key, 'pending', { ttl: PENDING_MS });
    return null;
  }

  /**
   * The platform's refusal of this very exchange (the code with this verifier, or with none) when
   * it refused it within REMEMBER_MS: sending the same again is answered from it, so a made-up code
   * costs one exchange however often it is sent. null when it was not refused.
   */
  async refusal(code: string, verifier: string | undefined): Promise<OAuth2Refusal | null> {
    const key = attemptKeyOf(code, verifier);
    const local = this.refusals.get(key);
    if (local) return local;
    const client = this.redis.client;
    if (!client) return null;
    try {
      const stored = await client.get(this.prefix + key);
      return stored === null ? null : (JSON.parse(stored) as OAuth2Refusal);
    } catch (error) {
      this.warnFallback(error);
      return null;
    }
  }

  /** Remembers the platform's refusal of this exchange (see `refusal`). */
  async rememberRefusal(
    code: string,
    verifier: string | undefined,
    refusal: OAuth2Refusal,
  ): Promise<void> {
    const key = attemptKeyOf(code, verifier);
    this.refusals.set(key, refusal);
    try {
      await this.redis.client?.set(this.prefix + key, JSON.stringify(refusal), 'PX', REMEMBER_MS);
    } catch (error) {
      this.warnFallback(error);
    }
  }

  /**
   * Gives up a claim whose exchange was refused (a missing or wrong verifier, an invalid grant):
   * the code was not spent, so whoever holds its verifier may still exchange it. Only the claim's
   * holder calls this, while it holds the claim (an exchange ends long before REMEMBER_MS).
   */
  async release(code: string): Promise<void> {
    const key = keyOf(code);
    this.local.delete(key);
    const client = this.redis.client;
    if (!client) return;
    try {
      await client.del(this.prefix + key);
    } catch (error) {
      // The claim then stands until it expires: the rightful exchange is told to log in again.
      this.warnFallback(error);
    }
  }

  private warnFallback(error: unknown): void {
    this.logger.warn(
      { reason: (error as Error).message },
      'Code-reuse guard fell back to this process',
    );
  }
}

function keyOf(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

/** One exchange: a code with one verifier (or none). */
function attemptKeyOf(code: string, verifier: string | undefined): string {
  return `refused:${createHash('sha256')
    .update(code)
    .update('\0')
    .update(verifier === undefined ? '\0none' : `\0${verifier}`)
    .digest('hex')}`;
}

/** The token endpoint's answer to an exchange it refused (RFC 6749 §5.2). */
export interface OAuth2Refusal {
  error: string;
  description?: string;
}
