import { Injectable, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { RedisBroadcasts, type Broadcast } from 'src/common/redis/redis-broadcast';
import { SESSION_CACHE_TTL_SECONDS } from 'src/common/auth/session-reach';
import { SessionCache } from 'src/sessions/session-cache';
import { SessionsInvalidatedEvent } from 'src/sessions/sessions.events';
import { UserStateChangedEvent } from 'src/users/users.events';

type Invalidation = { session: string } | { user: string };

/**
 * Makes revocations and bans take effect at once on every instance: the change evicts the local
 * cache and is broadcast on a Redis channel that every instance listens to. Without Redis there is
 * one instance and the local eviction is enough. Should Redis be down, other instances catch up
 * within the session cache TTL.
 */
@Injectable()
export class SessionInvalidation implements OnModuleInit {
  private channel: Broadcast<Partial<Record<'session' | 'user', unknown>>> | null = null;

  constructor(
    private readonly cache: SessionCache,
    private readonly broadcasts: RedisBroadcasts,
    private readonly events: EventEmitter2,
  ) {}

  onModuleInit(): void {
    this.channel = this.broadcasts.open('sessions:invalidate', {
      what: 'session invalidations',
      otherwise: `other instances catch up within ${SESSION_CACHE_TTL_SECONDS} s`,
      onMessage: (invalidation) => {
        if (typeof invalidation.session === 'string') this.evict({ session: invalidation.session });
        if (typeof invalidation.user === 'string') this.evict({ user: invalidation.user });
      },
    });
  }

  /** Whether invalidations come from other instances too (Redis configured). */
  get isShared(): boolean {
    return this.channel?.isShared ?? false;
  }

  async sessionChanged(sessionId: string): Promise<void> {
    this.evict({ session: sessionId });
    await this.channel?.publish({ session: sessionId });
  }

  async userChanged(userId: string): Promise<void> {
    this.evict({ user: userId });
    await this.channel?.publish({ user: userId });
  }

  /** A ban or unban: the user's cached sessions carry the old state. */
  @OnEvent(UserStateChangedEvent.event, { suppressErrors: false })
  onUserStateChanged({ userId }: UserStateChangedEvent): Promise<void> {
    return this.userChanged(userId);
  }

  private evict(invalidation: Invalidation): void {
    if ('session' in invalidation) this.cache.evictSession(invalidation.session);
    else this.cache.evictUser(invalidation.user);
    this.events.emit(SessionsInvalidatedEvent.event, new SessionsInvalidatedEvent(invalidation));
  }
}
