import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { isLockTimeout } from 'src/common/errors/database-errors';
import { tryRedisLock, type ReleaseLock } from 'src/common/redis/redis-lock';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/**
 * How long a settings write waits for the guild's earlier writers, here and on other instances,
 * before it is refused (429): the bound on what one guild's queue costs a request.
 */
export const MAX_WRITE_WAIT_MS = 5_000;

/** Writes of one guild waiting on this instance; beyond this a write is refused at once (429). */
export const MAX_QUEUED_WRITES = 20;

/**
 * How long an import or restore's claim on its guild lasts in Redis should its instance never
 * release it (it waits at most MAX_WRITE_WAIT_MS, then writes at most MAX_CHANGE_ENTRIES entries).
 */
const BULK_CLAIM_TTL_MS = 60_000;

/** `Retry-After` of a write refused because the guild is busy. */
const BUSY_RETRY_SECONDS = 2;

/**
 * The advisory-lock key of one guild's settings: the first 64 bits of SHA-256 of
 * `settings:<guild id>`, as PostgreSQL's signed bigint (a decimal string, so no precision is lost).
 */
export function settingsLockKey(guildId: string): string {
  return createHash('sha256').update(`settings:${guildId}`).digest().readBigInt64BE(0).toString();
}

/** A waiting writer: resumed when the guild is its turn, refused when its wait is over. */
interface Waiter {
  resume: () => void;
  timer: NodeJS.Timeout;
}

/** One guild's writers on this instance: whether one is writing, and who waits, in order. */
interface GuildQueue {
  busy: boolean;
  waiting: Waiter[];
  /** An import or restore is queued or running (one at a time per guild). */
  bulk: boolean;
}

/**
 * One settings writer per guild at a time (docs/request-costs.md). A writer first waits its turn
 * among this instance's writers of the guild in memory, holding no database connection, for at
 * most MAX_WRITE_WAIT_MS; then it opens its transaction and takes the guild's advisory lock,
 * which orders it against other instances (waited for the rest of that bound, `lock_timeout`).
 * A wait past the bound, a queue over MAX_QUEUED_WRITES, or a second import or restore of the
 * guild (on any instance sharing Redis; without Redis, or while it fails, on this one) is
 * answered 429 with `Retry-After`.
 */
@Injectable()
export class GuildSettingsWriters {
  private readonly logger = new Logger(GuildSettingsWriters.name);
  private readonly queues = new Map<string, GuildQueue>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisConnection,
    private readonly config: AppConfig,
  ) {}

  /** Runs `work` in a transaction holding the guild's settings lock. */
  async write<T>(
    guildId: string,
    work: (manager: EntityManager) => Promise<T>,
    { bulk = false }: { bulk?: boolean } = {},
  ): Promise<T> {
    const queue = this.queueOf(guildId);
    let releaseBulk: ReleaseLock | undefined;
    if (bulk) {
      if (queue.bulk) throw busy(BULK_UNDER_WAY);
      queue.bulk = true;
      try {
        releaseBulk = await this.claimFleetWide(guildId);
      } catch (error) {
        queue.bulk = false;
        this.forget(guildId, queue);
        throw error;
      }
    }
    const deadline = Date.now() + MAX_WRITE_WAIT_MS;
    try {
      await this.turn(guildId, queue);
      try {
        return await this.dataSource.transaction(async (manager) => {
          const waitMs = Math.max(1, deadline - Date.now());
          await manager.query(`SET LOCAL lock_timeout = ${waitMs}`);
          try {
            await manager.query('SELECT pg_advisory_xact_lock($1::bigint)', [
              settingsLockKey(guildId),
            ]);
          } catch (error) {
            if (isLockTimeout(error))
              throw busy("Another instance is writing this guild's settings");
            throw error;
          }
          return work(manager);
        });
      } finally {
        this.next(queue);
      }
    } finally {
      if (bulk) queue.bulk = false;
      this.forget(guildId, queue);
      await releaseBulk?.();
    }
  }

  /**
   * An import or restore's claim on the guild across the instances sharing Redis; refused (429)
   * while another instance holds one. Without Redis, or while it fails, this instance's own claim
   * is the only one.
   */
  private async claimFleetWide(guildId: string): Promise<ReleaseLock | undefined> {
    const client = this.redis.client;
    if (!client) return undefined;
    let release: ReleaseLock | null;
    try {
      release = await tryRedisLock(
        client,
        `${this.config.redisKeyPrefix}settings-bulk:${guildId}`,
        BULK_CLAIM_TTL_MS,
      );
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Bulk settings claim unavailable');
      return undefined;
    }
    if (!release) throw busy(BULK_UNDER_WAY);
    return release;
  }

  /** Resolves when it is this writer's turn; refuses once the wait is over or the queue is full. */
  private turn(guildId: string, queue: GuildQueue): Promise<void> {
    if (!queue.busy) {
      queue.busy = true;
      return Promise.resolve();
    }
    if (queue.waiting.length >= MAX_QUEUED_WRITES) {
      return Promise.reject(busy(`${MAX_QUEUED_WRITES} writes of this guild are already waiting`));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resume: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          queue.waiting.splice(queue.waiting.indexOf(waiter), 1);
          this.forget(guildId, queue);
          reject(busy(`Other writes of this guild took longer than ${MAX_WRITE_WAIT_MS} ms`));
        }, MAX_WRITE_WAIT_MS),
      };
      queue.waiting.push(waiter);
    });
  }

  private next(queue: GuildQueue): void {
    const waiter = queue.waiting.shift();
    if (waiter) waiter.resume();
    else queue.busy = false;
  }

  private queueOf(guildId: string): GuildQueue {
    let queue = this.queues.get(guildId);
    if (!queue) {
      queue = { busy: false, waiting: [], bulk: false };
      this.queues.set(guildId, queue);
    }
    return queue;
  }

  /** An idle guild keeps no entry: the map holds only guilds being written. */
  private forget(guildId: string, queue: GuildQueue): void {
    if (!queue.busy && !queue.bulk && queue.waiting.length === 0) this.queues.delete(guildId);
  }
}

const BULK_UNDER_WAY =
  'An import or restore of this guild is already under way; retry when it has finished';

function busy(reason: string): AppException {
  const error = new AppException(
    ErrorCode.RateLimited,
    `This guild's settings are busy: ${reason}; retry in ${BUSY_RETRY_SECONDS} seconds`,
  );
  error.headers = { 'Retry-After': BUSY_RETRY_SECONDS };
  return error;
}
