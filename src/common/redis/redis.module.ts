import { type DynamicModule, Global, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { RedisBroadcasts } from 'src/common/redis/redis-broadcast';
import type Redis from 'ioredis';

/** Bounded waits for every Redis command: a slow or absent Redis must never hang a request. */
const COMMAND_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * Owns the shared Redis connection when `REDIS_URL` is set. Commands fail fast while it is down
 * (no offline queue), and it reconnects in the background. Without `REDIS_URL` the Redis client
 * library is not even loaded. Provided through `open` (see RedisModule).
 */
export class RedisConnection implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisConnection.name);
  private lastError: string | null = null;

  private constructor(
    readonly client: Redis | null,
    /** REDIS_KEY_PREFIX: every key this service writes starts with it. */
    readonly keyPrefix: string,
  ) {
    client?.on('ready', () => {
      if (this.lastError !== null) this.logger.log('Redis connection restored');
      this.lastError = null;
    });
    client?.on('error', (error: Error) => {
      // Log a state change once, not every reconnect attempt.
      if (this.lastError === error.message) return;
      this.lastError = error.message;
      this.logger.warn({ reason: error.message }, 'Redis unavailable; retrying in the background');
    });
  }

  /** `url`: REDIS_URL, or null to run without Redis. */
  static async open(url: string | null, keyPrefix: string): Promise<RedisConnection> {
    if (!url) return new RedisConnection(null, keyPrefix);
    const { default: RedisClient } = await import('ioredis');
    return new RedisConnection(
      new RedisClient(url, {
        connectTimeout: CONNECT_TIMEOUT_MS,
        // How long a closing socket may linger; the default 2 s would hold shutdown.
        disconnectTimeout: 200,
        commandTimeout: COMMAND_TIMEOUT_MS,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
      }),
      keyPrefix,
    );
  }

  /** PING within the command timeout; false when Redis is not configured or unreachable. */
  async ping(): Promise<boolean> {
    if (!this.client) return false;
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.client) return;
    // QUIT lets a live connection finish its replies; anything else is simply dropped, which also
    // stops the reconnect loop.
    if (this.client.status === 'ready') {
      await this.client.quit().catch(() => this.client?.disconnect());
    } else {
      this.client.disconnect();
    }
  }
}

@Global()
@Module({})
export class RedisModule {
  /** `url`: REDIS_URL, or null to run without Redis; `keyPrefix`: REDIS_KEY_PREFIX. */
  static forRoot(url: string | null, keyPrefix: string): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        { provide: RedisConnection, useFactory: () => RedisConnection.open(url, keyPrefix) },
        {
          provide: RedisBroadcasts,
          useFactory: (redis: RedisConnection) => new RedisBroadcasts(redis.client, keyPrefix),
          inject: [RedisConnection],
        },
      ],
      exports: [RedisConnection, RedisBroadcasts],
    };
  }
}
