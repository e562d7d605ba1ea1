import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { subscribeToChannel } from 'src/common/redis/redis-subscriber';

/** What a broadcast channel is for, and what its owner does with what arrives. */
export interface BroadcastOptions<T> {
  /** What travels on it, for the log: "Could not subscribe to <what>". */
  what: string;
  /** What happens when a message cannot be published, for the log (e.g. "read every 5 s"). */
  otherwise: string;
  /** A message from any instance, this one included. */
  onMessage: (message: T) => void;
  /** The subscription was renewed after the connection was lost: messages may have been missed. */
  onResubscribed?: () => void;
}

/**
 * One channel every instance publishes on and listens to, as JSON: open with
 * `RedisBroadcasts.open`. Without Redis there is one instance, nothing is published, and the
 * owner acts on its own changes itself.
 */
export class Broadcast<T> {
  constructor(
    /** The Redis channel's name (with the key prefix). */
    readonly channel: string,
    private readonly client: Redis | null,
    private readonly options: BroadcastOptions<T>,
    private readonly logger: Logger,
  ) {}

  /** Whether other instances hear this one (Redis is configured). */
  get isShared(): boolean {
    return this.client !== null;
  }

  /** Publishes to every instance (this one too); false without Redis or when Redis failed. */
  async publish(message: T): Promise<boolean> {
    if (!this.client) return false;
    try {
      await this.client.publish(this.channel, JSON.stringify(message));
      return true;
    } catch (error) {
      this.logger.warn(
        { reason: (error as Error).message, channel: this.channel },
        `Could not publish ${this.options.what}; ${this.options.otherwise}`,
      );
      return false;
    }
  }

  /** A message as it arrived: parsed, or ignored with a warning when it is not JSON. */
  receive(text: string): void {
    let message: T;
    try {
      message = JSON.parse(text) as T;
    } catch {
      this.logger.warn(
        { channel: this.channel },
        `Ignored a malformed message of ${this.options.what}`,
      );
      return;
    }
    this.options.onMessage(message);
  }
}

/**
 * The Redis publish/subscribe channels between instances, with one lifecycle: each channel gets
 * a subscriber connection of its own that is renewed after every reconnect, failures are logged
 * (not while shutting down), and every subscriber is closed at shutdown.
 */
export class RedisBroadcasts implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisBroadcasts.name);
  private readonly subscribers: Redis[] = [];
  private closing = false;

  /** Provided by RedisModule, on its connection (null: no Redis) and key prefix. */
  constructor(
    private readonly client: Redis | null,
    private readonly keyPrefix: string,
  ) {}

  /** Opens the channel `name` (under the key prefix) and starts listening to it. */
  open<T>(name: string, options: BroadcastOptions<T>): Broadcast<T> {
    const client = this.client;
    const broadcast = new Broadcast<T>(`${this.keyPrefix}${name}`, client, options, this.logger);
    if (client) {
      this.subscribers.push(
        subscribeToChannel(
          client,
          broadcast.channel,
          (text) => broadcast.receive(text),
          (error) => {
            // A subscription cut short by this process's own shutdown (a CLI command that ends
            // at once) is no failure.
            if (this.closing) return;
            this.logger.warn(
              { reason: error.message, channel: broadcast.channel },
              `Could not subscribe to ${options.what}; ${options.otherwise}`,
            );
          },
          options.onResubscribed,
        ),
      );
    }
    return broadcast;
  }

  onApplicationShutdown(): void {
    this.closing = true;
    for (const subscriber of this.subscribers.splice(0)) subscriber.disconnect();
  }
}
