import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { RedisBroadcasts, type Broadcast } from 'src/common/redis/redis-broadcast';
import type { RevisionSummary } from 'src/settings/engine/settings.events';
import type { BotEvent } from 'src/events/bot-events';

/** What travels between instances: a guild's committed revisions, or bot health events. */
export type BusMessage =
  | { kind: 'settings'; guildId: string; revisions: RevisionSummary[] }
  | { kind: 'bot'; events: BotEvent[] }
  /** A shard reported somewhere: the instance comparing the bot's health does so at once. */
  | { kind: 'shard-reported' }
  /** Delivered on this instance only: messages may have been lost (the subscription was renewed). */
  | { kind: 'resync' };

type Listener = (message: BusMessage) => void;

/**
 * Carries stream events to every instance: a Redis channel that every instance subscribes to when
 * `REDIS_URL` is set (the publisher hears its own messages too, so there is one delivery path), the
 * process itself otherwise. A message published while Redis is down reaches this instance's
 * streams only; streams elsewhere fill the gap from the revisions with their next event.
 */
@Injectable()
export class EventBus implements OnModuleInit {
  private readonly logger = new Logger(EventBus.name);
  private readonly listeners = new Set<Listener>();
  private channel: Broadcast<BusMessage> | null = null;

  constructor(private readonly broadcasts: RedisBroadcasts) {}

  onModuleInit(): void {
    this.channel = this.broadcasts.open<BusMessage>('events', {
      what: 'stream events',
      otherwise: 'they are delivered on this instance only',
      onMessage: (message) => this.deliver(message),
      onResubscribed: () => this.deliver({ kind: 'resync' }),
    });
  }

  /** The Redis channel bot health events are published on from a script (see BotEventLog). */
  get redisChannel(): string {
    return this.channel?.channel ?? '';
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async publish(message: BusMessage): Promise<void> {
    if (await this.channel?.publish(message)) return;
    // After the caller's own work, as a message from Redis would arrive.
    setImmediate(() => this.deliver(message));
  }

  /** A message that reached this instance (from Redis, or from this one without it). */
  deliver(message: BusMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (error) {
        this.logger.error({ reason: (error as Error).message }, 'A stream event listener failed');
      }
    }
  }
}
