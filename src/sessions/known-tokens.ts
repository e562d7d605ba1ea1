import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import { Clock } from 'src/common/time/clock';

/** In process, bounded by count only: a token stays known however long ago it was last seen. */
export const MAX_KNOWN_TOKENS = 100_000;
/**
 * The shared marker lives as long as its session, up to this: past it, an instance still knows the
 * token if it was among the live sessions it loaded at boot, or once it resolves it live.
 */
const MARKER_MAX_SECONDS = 366 * 24 * 60 * 60;
/** 128 bits of the token's SHA-256 identify it well enough and halve the memory. */
const ID_LENGTH = 32;

/**
 * Token hashes known to have been valid: loaded from the live sessions at boot, issued here, or
 * resolved live from the database. An address refused for failed authentications may still look
 * these up, so a valid token is never refused for someone else's guesses, while a guess costs no
 * database work. In process, and with Redis also as a marker key for the session's lifetime, so a
 * token issued on one instance is recognised on every other. Being known only earns a lookup: a
 * revoked or expired token then fails it, and is forgotten.
 */
@Injectable()
export class KnownTokens {
  private readonly local = new LRUCache<string, true>({ ...entryBound(MAX_KNOWN_TOKENS) });
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: RedisConnection,
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.keyPrefix = `${config.redisKeyPrefix}sessions:known:`;
  }

  /** Never delays the caller: the shared marker, until `expiresAt`, is written in the background. */
  remember(tokenHash: string, expiresAt: Date): void {
    const id = tokenHash.slice(0, ID_LENGTH);
    this.local.set(id, true);
    const seconds = Math.ceil((expiresAt.getTime() - this.clock.nowMs()) / 1000);
    if (seconds <= 0) return;
    this.redis.client
      ?.set(this.keyPrefix + id, '1', 'EX', Math.min(seconds, MARKER_MAX_SECONDS))
      .catch(() => undefined);
  }

  /**
   * Token hashes of live sessions, most recently used first: known in this process only (their
   * markers, if any, are already shared), the most recent staying longest; never replaces
   * what is already known.
   */
  load(tokenHashes: readonly string[]): void {
    for (const tokenHash of tokenHashes.slice(0, MAX_KNOWN_TOKENS).reverse()) {
      const id = tokenHash.slice(0, ID_LENGTH);
      if (!this.local.has(id)) this.local.set(id, true);
    }
  }

  forget(tokenHash: string): void {
    const id = tokenHash.slice(0, ID_LENGTH);
    this.local.delete(id);
    this.redis.client?.del(this.keyPrefix + id).catch(() => undefined);
  }

  /** Without Redis, or when it cannot answer, only this process's memory counts. */
  async has(tokenHash: string): Promise<boolean> {
    const id = tokenHash.slice(0, ID_LENGTH);
    if (this.local.has(id)) return true;
    const client = this.redis.client;
    if (!client) return false;
    try {
      return (await client.exists(this.keyPrefix + id)) === 1;
    } catch {
      return false;
    }
  }
}
