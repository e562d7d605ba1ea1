import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/** A token issued or resolved live within this time stays recognised. */
const TTL_SECONDS = 24 * 60 * 60;
const MAX_ENTRIES = 100_000;
/** 128 bits of the token's SHA-256 identify it well enough and halve the memory. */
const ID_LENGTH = 32;

/**
 * Token hashes known to have been valid recently: issued here or resolved live from the database.
 * An address refused for failed authentications may still look these up, so a valid token is
 * never refused for someone else's guesses, while a guess costs no database work. In process, and
 * with Redis also as a marker key, so a token issued on one instance is recognised on every other.
 * Being known only earns a lookup: a revoked token then fails it, and is forgotten.
 */
@Injectable()
export class KnownTokens {
  private readonly local = new LRUCache<string, true>({
    max: MAX_ENTRIES,
    ttl: TTL_SECONDS * 1000,
  });
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: RedisConnection,
    config: AppConfig,
  ) {
    this.keyPrefix = `${config.redisKeyPrefix}sessions:known:`;
  }

  /** Never delays the caller: the shared marker is written in the background. */
  remember(tokenHash: string): void {
    const id = tokenHash.slice(0, ID_LENGTH);
    this.local.set(id, true);
    this.redis.client?.set(this.keyPrefix + id, '1', 'EX', TTL_SECONDS).catch(() => undefined);
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
