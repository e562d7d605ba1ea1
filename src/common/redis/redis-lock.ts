import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';

/** Deletes the key only while it still holds the caller's token: one atomic step. */
const COMPARE_AND_DELETE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface RedisLockOptions {
  /** The lock expires on its own after this long, should its holder never release it. */
  ttlMs: number;
  /** How long to wait for a lock held by someone else before going ahead without it. */
  waitMs: number;
  pollMs: number;
}

/** Releases a lock: a no-op when it has expired and someone else holds it now. */
export type ReleaseLock = () => Promise<void>;

/**
 * Takes a lock across instances (SET NX PX with a token of this holder). Resolves when the lock is
 * held or the wait is over; rejects only when Redis fails (callers decide whether to go on). The
 * release deletes the key only if it still holds this holder's token, so a holder whose lock
 * expired never deletes the next holder's.
 */
export async function acquireRedisLock(
  client: Redis,
  key: string,
  options: RedisLockOptions,
): Promise<ReleaseLock> {
  const token = randomUUID();
  const deadline = Date.now() + options.waitMs;
  while ((await client.set(key, token, 'PX', options.ttlMs, 'NX')) !== 'OK') {
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
  }
  return () => releaseRedisLock(client, key, token);
}

/**
 * Deletes `key` only while it still holds `token`: a holder whose lock expired never deletes the
 * next holder's. A failure is ignored: the lock expires on its own.
 */
export async function releaseRedisLock(client: Redis, key: string, token: string): Promise<void> {
  try {
    await client.eval(COMPARE_AND_DELETE, 1, key, token);
  } catch {
    // It expires on its own.
  }
}

/**
 * Takes a lock across instances at once or not at all: its release, or null when someone else
 * holds it. Rejects only when Redis fails (callers decide whether to go on).
 */
export async function tryRedisLock(
  client: Redis,
  key: string,
  ttlMs: number,
): Promise<ReleaseLock | null> {
  const token = randomUUID();
  if ((await client.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return null;
  return () => releaseRedisLock(client, key, token);
}
