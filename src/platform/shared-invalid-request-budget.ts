import { randomBytes } from 'node:crypto';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import {
  INVALID_REQUEST_WINDOW_MS,
  InvalidRequestBudget,
  SLOT_MS,
  type InvalidAnswerBudget,
} from 'src/platform/invalid-request-budget';

export interface SharedBudgetOptions {
  /** The fleet's limit (PLATFORM_INVALID_REQUEST_LIMIT). */
  limit: number;
  /** Every key starts with it (REDIS_KEY_PREFIX): one budget per deployment. */
  keyPrefix: string;
  /** The fleet's count is read again when older than this, before the next call is let out. */
  refreshMs?: number;
  /** How often this instance says it is alive, so the others know the fleet's size. */
  presenceMs?: number;
  /** Tests shorten the window and its slots; the platform's are 10 minutes in 10 s slots. */
  windowMs?: number;
  slotMs?: number;
}

const DEFAULT_REFRESH_MS = 1_000;
const DEFAULT_PRESENCE_MS = 5_000;
/** An instance not heard from in three presence intervals is no longer counted in the fleet. */
const PRESENCE_TTL_INTERVALS = 3;

/**
 * Adds the caller's invalid answers to the fleet's window and reads the window's total and the
 * number of live instances, in one atomic step on Redis's clock (so instances whose clocks differ
 * still fill the same slots).
 *
 * A slot is kept only while it lies in the window that ends now on Redis's clock: one ahead of it
 * (written by hand, or left behind when Redis's clock stepped back) is dropped like an expired one,
 * so it can never hold the budget spent. A slot or count that is not a whole number (the hash was
 * tampered with) is dropped too, and counted in the answer so that it is logged as what it is.
 *
 * KEYS: the slots (a hash: slot number → count), the instances (a sorted set: id → last seen, ms).
 * ARGV: answers to add, instance id, slot length (ms), slots in the window, presence lifetime (ms).
 * Returns [invalid answers in the window, live instances, slots dropped as unreadable or ahead].
 */
const RECORD_AND_READ = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local slotMs = tonumber(ARGV[3])
local slots = tonumber(ARGV[4])
local current = math.floor(now / slotMs)
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then redis.call('DEL', KEYS[1]) end
local add = tonumber(ARGV[1])
if add > 0 then redis.call('HINCRBY', KEYS[1], current, add) end
local total = 0
local dropped = 0
local counts = redis.call('HGETALL', KEYS[1])
for i = 1, #counts, 2 do
  local slot = tonumber(counts[i])
  local count = tonumber(counts[i + 1])
  if slot == nil or count == nil or slot ~= math.floor(slot) or count ~= math.floor(count) or count < 0 or slot > current then
    redis.call('HDEL', KEYS[1], counts[i])
    dropped = dropped + 1
  elseif current - slot >= slots then
    redis.call('HDEL', KEYS[1], counts[i])
  else
    total = total + count
  end
end
if total > 0 then redis.call('PEXPIRE', KEYS[1], slots * slotMs) end
local ttl = tonumber(ARGV[5])
if redis.call('TYPE', KEYS[2]).ok ~= 'zset' then redis.call('DEL', KEYS[2]) end
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return {total, redis.call('ZCARD', KEYS[2]), dropped}
`;

/**
 * The invalid-request budget of a fleet behind one egress address (docs/platform.md, "The
 * invalid-request budget"): every instance adds its 401, 403 and 429 answers to one sliding window
 * in Redis and refuses calls once the fleet's total reaches the limit.
 *
 * - The fleet's total is read with every answer recorded, and again before a call when it is more
 *   than `refreshMs` old: an instance that drew no invalid answer stops within that time of the
 *   budget being spent, without a Redis round trip per call.
 * - While Redis cannot be reached (or before it ever was), the instance falls back to its own
 *   share: the limit divided by the fleet's size as last seen (1 when never seen), against the
 *   answers it counted itself in the last ten minutes. Never no limit.
 * - Answers counted while Redis is down are added to the fleet's window once it is back.
 */
export class SharedInvalidRequestBudget implements InvalidAnswerBudget, OnApplicationShutdown {
  readonly limit: number;
  private readonly logger = new Logger(SharedInvalidRequestBudget.name);
  private readonly id = randomBytes(8).toString('hex');
  private readonly keys: { slots: string; instances: string };
  private readonly refreshMs: number;
  private readonly slotMs: number;
  private readonly slots: number;
  private readonly presenceTtlMs: number;
  /** This instance's own answers: the fallback's count. */
  private readonly own: InvalidRequestBudget;
  /** Answers recorded here and not yet sent to the fleet's window. */
  private pending = 0;
  /** Answers on their way to the fleet's window (in the running exchange). */
  private sending = 0;
  private fleetCount = 0;
  private fleetSize = 1;
  /** Whether the last exchange with Redis succeeded: the fleet's count is known. */
  private healthy = false;
  /** Whether the last exchange failed and its failure was logged (the return is logged too). */
  private lost = false;
  /** When the last exchange started (performance.now()). */
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private syncing: Promise<void> | null = null;
  /** The exchange that follows the running one, shared by everyone who asked meanwhile. */
  private queued: Promise<void> | null = null;
  /** Shut down: no exchange starts any more. */
  private closed = false;
  private readonly presence: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    options: SharedBudgetOptions,
  ) {
    this.limit = options.limit;
    this.keys = {
      slots: `${options.keyPrefix}platform:invalid-answers`,
      instances: `${options.keyPrefix}platform:budget-instances`,
    };
    this.refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
    this.slotMs = options.slotMs ?? SLOT_MS;
    const windowMs = options.windowMs ?? INVALID_REQUEST_WINDOW_MS;
    this.slots = Math.ceil(windowMs / this.slotMs) + 1;
    const presenceMs = options.presenceMs ?? DEFAULT_PRESENCE_MS;
    this.presenceTtlMs = presenceMs * PRESENCE_TTL_INTERVALS;
    this.own = new InvalidRequestBudget(this.limit, Date.now, { windowMs, slotMs: this.slotMs });
    this.presence = setInterval(() => void this.sync(), presenceMs).unref();
    // Joins the fleet as soon as Redis is ready, at boot and whenever it comes back.
    redis.on('ready', this.rejoin);
    if (redis.status === 'ready') void this.sync();
  }

  private readonly rejoin = (): void => void this.sync();

  record(): void {
    this.own.record();
    this.pending += 1;
    // While Redis is away the answer waits in `pending`; it is not retried per answer.
    if (this.healthy || this.stale()) void this.sync();
  }

  async spent(): Promise<boolean> {
    // While Redis answers (and before it was ever asked), a total older than `refreshMs` is read
    // again before the call is let out. Once it has failed, no call waits for it: the share
    // decides, and Redis is tried again in the background at most once per `refreshMs`.
    if (this.stale()) {
      if (this.healthy || !this.lost) await this.sync();
      else void this.sync();
    }
    return this.count() >= this.threshold();
  }

  /**
   * The count the decision is made on: the fleet's (never less than this instance's own, should
   * Redis have lost its window), or this instance's own while on its share.
   */
  count(): number {
    const own = this.own.count();
    return this.healthy ? Math.max(this.fleetCount + this.sending + this.pending, own) : own;
  }

  /** The fleet's limit, or this instance's share of it (one at least) while Redis is away. */
  threshold(): number {
    return this.healthy ? this.limit : Math.max(1, Math.floor(this.limit / this.fleetSize));
  }

  /** Live instances of the fleet, as last read from Redis (one until then). */
  instances(): number {
    return this.fleetSize;
  }

  /** Whether the count is the fleet's (Redis answered last time) rather than this instance's. */
  shared(): boolean {
    return this.healthy;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.presence);
    this.redis.off('ready', this.rejoin);
    // The last answers go with the exchanges under way; none starts after this, so the instance
    // leaves the fleet's presence for good.
    await (this.queued ?? this.syncing);
    this.closed = true;
    if (this.redis.status !== 'ready') return;
    await this.redis.zrem(this.keys.instances, this.id).catch(() => undefined);
  }

  /**
   * An exchange with Redis that starts after this call: one runs at a time, and calls made while
   * one runs share the next (which carries every answer recorded meanwhile).
   */
  private sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.syncing) {
      this.syncing = this.exchange().finally(() => (this.syncing = null));
      return this.syncing;
    }
    this.queued ??= this.syncing.then(() => {
      this.queued = null;
      return this.sync();
    });
    return this.queued;
  }

  private stale(): boolean {
    return performance.now() - this.attemptedAt >= this.refreshMs;
  }

  private async exchange(): Promise<void> {
    const adding = this.pending;
    this.pending = 0;
    this.sending = adding;
    this.attemptedAt = performance.now();
    try {
      const [total, instances, dropped] = (await this.redis.eval(
        RECORD_AND_READ,
        2,
        this.keys.slots,
        this.keys.instances,
        adding,
        this.id,
        this.slotMs,
        this.slots,
        this.presenceTtlMs,
      )) as [number, number, number];
      if (dropped > 0) {
        this.logger.error(
          { key: this.keys.slots, dropped },
          "Invalid-request budget: dropped slots from Redis that no instance writes (not a whole number, or ahead of Redis's clock); the key was changed by hand or Redis's clock stepped back",
        );
      }
      this.sending = 0;
      this.fleetCount = total;
      this.fleetSize = Math.max(1, instances);
      this.healthy = true;
      if (this.lost) {
        this.lost = false;
        this.logger.log(
          { invalid_answers: total, limit: this.limit },
          'Invalid-request budget: Redis is back; counting with the fleet again',
        );
      }
    } catch (error) {
      // Kept for the next exchange: an answer counted while Redis is down is not lost.
      this.sending = 0;
      this.pending += adding;
      if (this.healthy || !this.lost) {
        this.lost = true;
        this.logger.warn(
          {
            reason: (error as Error).message,
            share: Math.max(1, Math.floor(this.limit / this.fleetSize)),
          },
          "Invalid-request budget: Redis cannot be reached; counting this instance's own answers against its share of the limit",
        );
      }
      this.healthy = false;
    }
  }
}
