import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { releaseRedisLock } from 'src/common/redis/redis-lock';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import type { BotEvent, BotEventBody, BotHealth } from 'src/events/bot-events';
import { EventBus } from 'src/events/event-bus';

/** How many bot health events are kept for resuming a stream (`Last-Event-ID`). */
export const BOT_EVENT_WINDOW = 1_000;

/**
 * Numbers the events, keeps the window, records the state they lead to and publishes them, in one
 * step: a stream reading the window never sees an event that was not published, nor the reverse.
 * Only while the caller holds the lead (one that lost it while stalled appends nothing), and the
 * numbering starts from the clock: numbers stay larger than any before a restart of Redis.
 */
const APPEND = `
if redis.call('GET', KEYS[4]) ~= ARGV[5] then return false end
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[6]) end
local events = cjson.decode(ARGV[2])
local first = redis.call('INCRBY', KEYS[1], #events) - #events
for i, event in ipairs(events) do
  event.id = first + i
  redis.call('RPUSH', KEYS[2], cjson.encode(event))
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('SET', KEYS[3], ARGV[1])
local published = cjson.encode(events)
redis.call('PUBLISH', ARGV[4], '{"kind":"bot","events":' .. published .. '}')
return published`;

/** Holds the lead while it is this holder's, or takes it when free: one ticker for all instances. */
const LEAD = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/**
 * The bot health events of all instances in one numbered sequence, the last `BOT_EVENT_WINDOW` of
 * them kept for resuming, and the state they lead to: in Redis when `REDIS_URL` is set (shared by
 * the instances), in this process otherwise. One instance at a time (the lead) appends.
 */
@Injectable()
export class BotEventLog {
  private readonly holder = randomUUID();
  private readonly keys: { seq: string; window: string; state: string; lead: string };
  /** Without Redis. */
  /** Numbered from the clock: larger than any number given out before this process started. */
  private local: { seq: number; window: BotEvent[]; state: BotHealth | null } = {
    seq: Date.now(),
    window: [],
    state: null,
  };

  constructor(
    private readonly redis: RedisConnection,
    private readonly bus: EventBus,
    config: AppConfig,
  ) {
    const prefix = `${config.redisKeyPrefix}events:bot:`;
    this.keys = {
      seq: `${prefix}seq`,
      window: `${prefix}window`,
      state: `${prefix}state`,
      lead: `${prefix}lead`,
    };
  }

  /** Whether this instance appends for the next `ttlMs` (always, without Redis). */
  async lead(ttlMs: number): Promise<boolean> {
    const client = this.redis.client;
    if (!client) return true;
    return (await client.eval(LEAD, 1, this.keys.lead, this.holder, ttlMs)) === 1;
  }

  /** Gives the lead up (a follower-less or stopping instance), so another takes it at once. */
  async release(): Promise<void> {
    const client = this.redis.client;
    if (client) await releaseRedisLock(client, this.keys.lead, this.holder);
  }

  /** The state the last events led to (null before the first), and the last event's number. */
  async last(): Promise<{ seq: number; state: BotHealth | null }> {
    const client = this.redis.client;
    if (!client) return { seq: this.local.seq, state: this.local.state };
    const [seq, state] = await client.mget(this.keys.seq, this.keys.state);
    return {
      seq: seq === null ? Date.now() : Number(seq),
      state: state ? (JSON.parse(state) as BotHealth) : null,
    };
  }

  /** Numbers, keeps and publishes `events`, which lead to `state`. */
  async append(state: BotHealth, events: readonly BotEventBody[]): Promise<void> {
    const client = this.redis.client;
    if (client) {
      await client.eval(
        APPEND,
        4,
        this.keys.seq,
        this.keys.window,
        this.keys.state,
        this.keys.lead,
        JSON.stringify(state),
        JSON.stringify(events),
        BOT_EVENT_WINDOW,
        this.bus.redisChannel,
        this.holder,
        Date.now(),
      );
      return;
    }
    const numbered = events.map((event, i) => ({ ...event, id: this.local.seq + i + 1 }));
    this.local = {
      seq: this.local.seq + events.length,
      window: [...this.local.window, ...numbered].slice(-BOT_EVENT_WINDOW),
      state,
    };
    this.bus.deliver({ kind: 'bot', events: numbered });
  }

  /**
   * The events after `id`, oldest first; null when they cannot all be given (`id` is older than
   * the window, or not one this log has numbered).
   */
  async since(id: number): Promise<BotEvent[] | null> {
    const { seq, window } = await this.read();
    if (id > seq) return null;
    if (id === seq) return [];
    const oldest = window[0]?.id ?? seq + 1;
    if (id < oldest - 1) return null;
    return window.filter((event) => event.id > id);
  }

  private async read(): Promise<{ seq: number; window: BotEvent[] }> {
    const client = this.redis.client;
    if (!client) return this.local;
    const [[, seq], [, window]] = (await client
      .multi()
      .get(this.keys.seq)
      .lrange(this.keys.window, 0, -1)
      .exec()) as [[unknown, string | null], [unknown, string[]]];
    return {
      seq: seq === null ? Date.now() : Number(seq),
      window: window.map((text) => JSON.parse(text) as BotEvent),
    };
  }
}
