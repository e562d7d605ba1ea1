import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisConnection } from 'src/common/redis/redis.module';
import { subscribeToChannel } from 'src/common/redis/redis-subscriber';
import { AppConfig } from 'src/config/app-config';
import type { RevisionSummary } from 'src/settings/settings.events';
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
export class EventBus implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EventBus.name);
  private readonly listeners = new Set<Listener>();
  private readonly channel: string;
  private subscriber: Redis | null = null;
  private closing = false;

  constructor(
    private readonly redis: RedisConnection,
    config: AppConfig,
  ) {
    this.channel = `${config.redisKeyPrefix}events`;
  }

  onModuleInit(): void {
    const client = this.redis.client;
    if (!client) return;
    this.subscriber = subscribeToChannel(
      client,
      this.channel,
      (text) => this.receive(text),
      (error) => {
        if (this.closing) return;
        this.logger.warn({ reason: error.message }, 'Could not subscribe to stream events');
      },
      () => this.deliver({ kind: 'resync' }),
    );
  }

  onApplicationShutdown(): void {
    this.closing = true;
    this.subscriber?.disconnect();
  }

  /** The Redis channel bot health events are published on from a script (see BotEventLog). */
  get redisChannel(): string {
    return this.channel;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async publish(message: BusMessage): Promise<void> {
    const client = this.redis.client;
    if (client) {
      try {
        await client.publish(this.channel, JSON.stringify(message));
        return;
      } catch (error) {
        this.logger.warn(
          { reason: (error as Error).message },
          'Could not publish a stream event to other instances; delivered on this one only',
        );
      }
    }
    // After the caller's own work, as a message from Redis would arrive.
    setImmediate(() => this.deliver(message));
  }

  /** A message that reached this instance from elsewhere (the bot health log's script). */
  deliver(message: BusMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (error) {
        this.logger.error({ reason: (error as Error).message }, 'A stream event listener failed');
      }
    }
  }

  private receive(text: string): void {
    let message: BusMessage;
    try {
      message = JSON.parse(text) as BusMessage;
    } catch {
      this.logger.warn('Ignored a malformed stream event message');
      return;
    }
    this.deliver(message);
  }
}
