import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import type Redis from 'ioredis';
import { RedisConnection } from 'src/common/redis/redis.module';
import { subscribeToChannel } from 'src/common/redis/redis-subscriber';
import { AppConfig } from 'src/config/app-config';
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
export class SessionInvalidation implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SessionInvalidation.name);
  private readonly channel: string;
  private subscriber: Redis | null = null;
  private closing = false;

  constructor(
    private readonly cache: SessionCache,
    private readonly redis: RedisConnection,
    private readonly events: EventEmitter2,
    config: AppConfig,
  ) {
    this.channel = `${config.redisKeyPrefix}sessions:invalidate`;
  }

  onModuleInit(): void {
    const client = this.redis.client;
    if (!client) return;
    this.subscriber = subscribeToChannel(
      client,
      this.channel,
      (message) => this.apply(message),
      (error) => {
        // A subscription cut short by this process's own shutdown (a CLI command that ends at once).
        if (this.closing) return;
        this.logger.warn({ reason: error.message }, 'Could not subscribe to session invalidations');
      },
    );
  }

  /** Whether invalidations come from other instances too (Redis configured). */
  get isShared(): boolean {
    return this.redis.client !== null;
  }

  async sessionChanged(sessionId: string): Promise<void> {
    this.evict({ session: sessionId });
    await this.broadcast({ session: sessionId });
  }

  async userChanged(userId: string): Promise<void> {
    this.evict({ user: userId });
    await this.broadcast({ user: userId });
  }

  /** A ban or unban: the user's cached sessions carry the old state. */
  @OnEvent(UserStateChangedEvent.event, { suppressErrors: false })
  onUserStateChanged({ userId }: UserStateChangedEvent): Promise<void> {
    return this.userChanged(userId);
  }

  onApplicationShutdown(): void {
    this.closing = true;
    this.subscriber?.disconnect();
  }

  private async broadcast(invalidation: Invalidation): Promise<void> {
    const client = this.redis.client;
    if (!client) return;
    try {
      await client.publish(this.channel, JSON.stringify(invalidation));
    } catch (error) {
      this.logger.warn(
        { reason: (error as Error).message },
        `Could not broadcast a session invalidation; other instances catch up within ${SESSION_CACHE_TTL_SECONDS} s`,
      );
    }
  }

  private evict(invalidation: Invalidation): void {
    if ('session' in invalidation) this.cache.evictSession(invalidation.session);
    else this.cache.evictUser(invalidation.user);
    this.events.emit(SessionsInvalidatedEvent.event, new SessionsInvalidatedEvent(invalidation));
  }

  private apply(message: string): void {
    let invalidation: Partial<Record<'session' | 'user', unknown>>;
    try {
      invalidation = JSON.parse(message) as Partial<Record<'session' | 'user', unknown>>;
    } catch {
      this.logger.warn('Ignored a malformed session invalidation message');
      return;
    }
    if (typeof invalidation.session === 'string') this.evict({ session: invalidation.session });
    if (typeof invalidation.user === 'string') this.evict({ user: invalidation.user });
  }
}
