import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { SESSION_CACHE_TTL_SECONDS } from 'src/common/auth/session-reach';

const TTL_MS = SESSION_CACHE_TTL_SECONDS * 1000;
const MAX_ENTRIES = 50_000;

export interface CachedSession {
  session: AuthenticatedSession;
  /** When this process last wrote `last_used_at` (epoch ms). */
  lastUsedWrittenAt: number;
}

/**
 * Resolved sessions by token hash, so that an authenticated request costs no database round trip.
 * Revocations and bans evict entries at once (on every instance, through SessionInvalidation);
 * the TTL bounds staleness should an invalidation message be lost.
 */
@Injectable()
export class SessionCache {
  private readonly entries = new LRUCache<string, CachedSession>({
    ...entryBound(MAX_ENTRIES),
    ttl: TTL_MS,
  });
  private evictions = 0;

  /**
   * Moves on every eviction. A lookup that started before an eviction may have read the session
   * before it was revoked, so it is not cached when this changed meanwhile (see `setIfUnchanged`).
   */
  get epoch(): number {
    return this.evictions;
  }

  get(tokenHash: string): CachedSession | undefined {
    return this.entries.get(tokenHash);
  }

  /** Caches a lookup unless an eviction happened since `epoch` was read. */
  setIfUnchanged(tokenHash: string, entry: CachedSession, epoch: number): void {
    if (epoch === this.evictions) this.entries.set(tokenHash, entry);
  }

  evictSession(sessionId: string): void {
    this.evictWhere((session) => session.id === sessionId);
  }

  evictUser(userId: string): void {
    this.evictWhere((session) => session.userId === userId);
  }

  private evictWhere(matches: (session: AuthenticatedSession) => boolean): void {
    this.evictions++;
    for (const [key, entry] of this.entries.entries()) {
      if (matches(entry.session)) this.entries.delete(key);
    }
  }
}
