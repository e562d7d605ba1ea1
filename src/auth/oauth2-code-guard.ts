import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/** Longer than any authorization code lives on the platform. */
const REMEMBER_MS = 10 * 60_000;

/**
 * Lets each OAuth2 authorization code be exchanged once, across instances: Redis `SET NX` with a
 * TTL when `REDIS_URL` is set, else (one instance) an in-process store. Codes are kept as hashes.
 * A refused exchange releases its claim, so a code seen without its verifier cannot be burned.
 */
@Injectable()
export class OAuth2CodeGuard {
  private readonly logger = new Logger(OAuth2CodeGuard.name);
  private readonly local = new LRUCache<string, true>({
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
   * True the first time a code is claimed, false while it is claimed. A claim stands until it is
   * released (an exchange the platform refused) or the code could no longer be valid.
   */
  async claim(code: string): Promise<boolean> {
    const key = keyOf(code);
    const client = this.redis.client;
    if (client) {
      try {
        return (await client.set(this.prefix + key, '1', 'PX', REMEMBER_MS, 'NX')) === 'OK';
      } catch (error) {
        // The platform still refuses a reused code; this guard only saves the round trip.
        this.warnFallback(error);
      }
    }
    if (this.local.has(key)) return false;
    this.local.set(key, true);
    return true;
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
