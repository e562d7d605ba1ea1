import {
  isSnowflake,
  MAX_EVENT_BATCH,
  MAX_SNAPSHOT_PART,
  shardOfGuild,
  type BotGuildsStatus,
  type GuildEvent,
  type GuildEventBatch,
  type GuildEventsResult,
  type GuildEventType,
  type GuildSnapshotPart,
  type GuildSnapshotProgress,
} from './contract.js';
import {
  createTransport,
  errorReporter,
  isRecord,
  isShardId,
  positive,
  ReporterError,
  wholeUpTo,
  type RequestOptions,
} from './transport.js';

export interface MembershipReporterOptions extends RequestOptions {
  /** How often queued joins and leaves are sent. Default 5 s. */
  flushIntervalMs?: number;
  /**
   * A shard nothing was sent for in this long gets an empty batch at the next flush tick, so the
   * service keeps it live (it allows 120 s by default). Default 30 s.
   */
  heartbeatIntervalMs?: number;
  /** Events per batch, at most 1000; a shard's queue reaching it is sent at once. Default 1000. */
  maxBatch?: number;
  /**
   * Events kept per shard (one per guild) while the service cannot be reached; past it the oldest
   * are dropped and reported. Default 100,000.
   */
  maxQueuedPerShard?: number;
  /** Failures of the background sends (flush ticks, heartbeats). Default: a line on stderr. */
  onError?: (error: ReporterError) => void;
}

export interface MembershipReporter {
  /**
   * Replaces the shard's guilds with `guildIds` as of `at` (when the shard's READY arrived): the
   * ids are deduplicated, checked against Discord's sharding rule and sent in parts of at most
   * 4000, one after the other. Resolves with the service's final progress, or null when a newer
   * snapshot of the same shard took over before this one was sent whole. Rejects with a
   * {@link ReporterError}.
   */
  snapshot(
    shardId: number,
    shardCount: number,
    guildIds: Iterable<string>,
    at?: Date,
  ): Promise<GuildSnapshotProgress | null>;
  /** Queues a join, stamped `at` (now): call it when the bot sees the join, not later. */
  joined(shardId: number, guildId: string, at?: Date): void;
  /** Queues a leave (a real removal, never an outage), stamped `at` (now). */
  left(shardId: number, guildId: string, at?: Date): void;
  /**
   * The shard lost its gateway connection: no more heartbeats for it, so the service stops
   * trusting the feed if the shard stays away longer than its staleness limit. Queued events are
   * still sent.
   */
  disconnected(shardId: number): void;
  /** The shard resumed its session (its missed events are replayed): heartbeats start again. */
  resumed(shardId: number): void;
  /** Events queued and not yet accepted, for one shard or all. */
  pending(shardId?: number): number;
  /** `GET /internal/bot-guilds`: whether the service currently trusts the feed. */
  status(): Promise<BotGuildsStatus>;
  /** Sends every queued event now; rejects with the first failure. */
  flush(): Promise<void>;
  /** Stops the timer, waits for snapshots under way and flushes; later calls are refused. */
  close(): Promise<void>;
}

interface QueuedEvent {
  event: GuildEvent;
  atMs: number;
}

interface ShardState {
  /** Guild id → its newest event not yet accepted, oldest first. */
  queue: Map<string, QueuedEvent>;
  flushing: Promise<void> | undefined;
  /** Bumped by each snapshot: an older snapshot still being sent stops at its next part. */
  snapshotGeneration: number;
  /** When a request for the shard last started, answered or not (ms). */
  lastSentMs: number;
  /** False between `disconnected` and `resumed` (or a snapshot): no heartbeats meanwhile. */
  connected: boolean;
  /** Events dropped from a full queue since the last report of it. */
  overflowed: number;
}

export function createMembershipReporter(options: MembershipReporterOptions): MembershipReporter {
  const flushIntervalMs = positive('flushIntervalMs', options.flushIntervalMs ?? 5_000);
  const heartbeatIntervalMs = positive(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs ?? 30_000,
  );
  const maxBatch = wholeUpTo('maxBatch', options.maxBatch ?? MAX_EVENT_BATCH, MAX_EVENT_BATCH);
  const maxQueued = positive('maxQueuedPerShard', options.maxQueuedPerShard ?? 100_000);
  const report = errorReporter(options.onError);

  const shards = new Map<number, ShardState>();
  const snapshotsUnderWay = new Set<Promise<unknown>>();
  let closed = false;
  const transport = createTransport(options, (shardId) => {
    shard(shardId).lastSentMs = Date.now();
  });

  function shard(shardId: number): ShardState {
    let state = shards.get(shardId);
    if (state === undefined) {
      state = {
        queue: new Map(),
        flushing: undefined,
        snapshotGeneration: 0,
        lastSentMs: -Infinity,
        connected: true,
        overflowed: 0,
      };
      shards.set(shardId, state);
    }
    return state;
  }

  /** Sends the shard's queue in batches until it is empty; with `heartbeat`, at least one batch. */
  async function drain(shardId: number, state: ShardState, heartbeat: boolean): Promise<void> {
    let sent = false;
    while (state.queue.size > 0 || (heartbeat && !sent)) {
      const batch = [...take(state.queue.values(), maxBatch)];
      const body: GuildEventBatch = { events: batch.map((queued) => queued.event) };
      const text = JSON.stringify(body);
      try {
        await transport.call(
          'POST',
          `/internal/shards/${shardId}/guild-events`,
          text,
          shardId,
          readEvents,
        );
      } catch (error) {
        if (!(error instanceof ReporterError) || error.kind !== 'refused') throw error;
        // Sent again it would be refused again, and hold back every later event of the shard.
        forget(state.queue, batch);
        throw new ReporterError('refused', error.message, {
          shardId,
          status: error.status,
          code: error.code,
          details: error.details,
          dropped: batch.length,
        });
      }
      forget(state.queue, batch);
      sent = true;
    }
  }

  function flushShard(shardId: number, state: ShardState, heartbeat = false): Promise<void> {
    state.flushing ??= drain(shardId, state, heartbeat).finally(() => {
      state.flushing = undefined;
    });
    return state.flushing;
  }

  function reportOverflow(): void {
    for (const [shardId, state] of shards) {
      if (state.overflowed === 0) continue;
      const dropped = state.overflowed;
      state.overflowed = 0;
      report(
        new ReporterError(
          'overflow',
          `shard ${shardId}: ${dropped} events dropped, the queue holds at most ${maxQueued}`,
          { shardId, dropped },
        ),
      );
    }
  }

  function tick(): void {
    reportOverflow();
    const now = Date.now();
    if (transport.paused()) return;
    for (const [shardId, state] of shards) {
      // A shard whose batch is still being sent (or retried) is left to it.
      if (state.flushing !== undefined) continue;
      const quiet = now - state.lastSentMs >= heartbeatIntervalMs;
      if (state.queue.size > 0 || (quiet && state.connected)) {
        flushShard(shardId, state, true).catch(report);
      }
    }
  }

  const timer = setInterval(tick, flushIntervalMs);
  // The reporter serves the bot; it must never be what keeps the process alive.
  timer.unref();

  function enqueue(type: GuildEventType, shardId: number, guildId: string, at: Date): void {
    const atMs = at.getTime();
    if (closed || !isShardId(shardId) || !isSnowflake(guildId) || Number.isNaN(atMs)) {
      const why = closed ? 'the reporter is closed' : 'not a shard id, guild id and date';
      report(
        new ReporterError('invalid', `${type} of ${guildId} on shard ${shardId} not sent: ${why}`),
      );
      return;
    }
    const state = shard(shardId);
    const previous = state.queue.get(guildId);
    // The service keeps each guild's newest event by `at`, so an older one still queued is
    // replaced rather than sent: the queue holds each guild once, whatever the churn.
    if (previous !== undefined && previous.atMs > atMs) return;
    state.queue.delete(guildId);
    state.queue.set(guildId, { event: { type, guild_id: guildId, at: at.toISOString() }, atMs });
    if (state.queue.size > maxQueued) {
      const oldest = state.queue.keys().next();
      if (oldest.done !== true) state.queue.delete(oldest.value);
      state.overflowed += 1;
    }
    if (state.queue.size >= maxBatch && state.flushing === undefined && !transport.paused()) {
      flushShard(shardId, state).catch(report);
    }
  }

  async function sendSnapshot(
    shardId: number,
    state: ShardState,
    generation: number,
    parts: GuildSnapshotPart[],
  ): Promise<GuildSnapshotProgress | null> {
    let progress: GuildSnapshotProgress | undefined;
    const path = `/internal/shards/${shardId}/guilds`;
    for (const part of parts) {
      if (state.snapshotGeneration !== generation) return null;
      progress = await transport.call('PUT', path, JSON.stringify(part), shardId, readProgress);
    }
    if (progress === undefined || !progress.complete) {
      const { received, total } = progress ?? { received: 0, total: parts[0].total };
      throw new ReporterError(
        'incomplete',
        `PUT ${path}: the service holds ${received} of the snapshot's ${total} guilds`,
        { shardId },
      );
    }
    // The complete snapshot stands for every change to the shard before it.
    const snapshotMs = Date.parse(parts[0].snapshot_at);
    for (const [guildId, queued] of state.queue) {
      if (queued.atMs < snapshotMs) state.queue.delete(guildId);
    }
    return progress;
  }

  async function flush(): Promise<void> {
    reportOverflow();
    const flushes: Promise<void>[] = [];
    for (const [shardId, state] of shards) {
      if (state.queue.size > 0 || state.flushing !== undefined) {
        flushes.push(flushShard(shardId, state));
      }
    }
    const failed = (await Promise.allSettled(flushes)).find(
      (result) => result.status === 'rejected',
    );
    if (failed !== undefined) throw failed.reason;
  }

  return {
    async snapshot(shardId, shardCount, guildIds, at = new Date()) {
      if (closed) throw new ReporterError('invalid', 'the reporter is closed', { shardId });
      if (!isShardId(shardCount - 1) || !isShardId(shardId) || shardId >= shardCount) {
        throw new ReporterError('invalid', `shard ${shardId} of ${shardCount} does not exist`, {
          shardId,
        });
      }
      if (Number.isNaN(at.getTime())) {
        throw new ReporterError('invalid', 'the snapshot time is not a date', { shardId });
      }
      const ids = [...new Set(guildIds)];
      for (const id of ids) {
        const owner = isSnowflake(id) ? shardOfGuild(id, shardCount) : undefined;
        if (owner !== shardId) {
          const why = owner === undefined ? 'is not a guild id' : `belongs to shard ${owner}`;
          throw new ReporterError('invalid', `${JSON.stringify(id)} ${why}, not ${shardId}`, {
            shardId,
          });
        }
      }
      const snapshotAt = at.toISOString();
      const parts: GuildSnapshotPart[] = [];
      for (let start = 0; start === 0 || start < ids.length; start += MAX_SNAPSHOT_PART) {
        parts.push({
          shard_count: shardCount,
          snapshot_at: snapshotAt,
          total: ids.length,
          guild_ids: ids.slice(start, start + MAX_SNAPSHOT_PART),
        });
      }
      const state = shard(shardId);
      state.connected = true;
      state.snapshotGeneration += 1;
      const sending = sendSnapshot(shardId, state, state.snapshotGeneration, parts);
      snapshotsUnderWay.add(sending);
      try {
        return await sending;
      } finally {
        snapshotsUnderWay.delete(sending);
      }
    },
    joined: (shardId, guildId, at = new Date()) => enqueue('join', shardId, guildId, at),
    left: (shardId, guildId, at = new Date()) => enqueue('leave', shardId, guildId, at),
    disconnected(shardId) {
      if (isShardId(shardId)) shard(shardId).connected = false;
    },
    resumed(shardId) {
      if (isShardId(shardId)) shard(shardId).connected = true;
    },
    pending(shardId) {
      if (shardId !== undefined) return shards.get(shardId)?.queue.size ?? 0;
      let total = 0;
      for (const state of shards.values()) total += state.queue.size;
      return total;
    },
    status: () => transport.call('GET', '/internal/bot-guilds', undefined, undefined, readStatus),
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled(snapshotsUnderWay);
      await flush();
    },
  };
}

function* take<T>(values: Iterable<T>, count: number): Generator<T> {
  if (count <= 0) return;
  let taken = 0;
  for (const value of values) {
    yield value;
    taken += 1;
    if (taken === count) return;
  }
}

/** Removes the sent events, but not a newer event of the same guild queued since. */
function forget(queue: Map<string, QueuedEvent>, sent: QueuedEvent[]): void {
  for (const queued of sent) {
    if (queue.get(queued.event.guild_id) === queued) queue.delete(queued.event.guild_id);
  }
}

function readProgress(body: unknown): GuildSnapshotProgress | undefined {
  if (!isRecord(body)) return undefined;
  const { shard_id, snapshot_at, received, total, complete } = body;
  if (
    typeof shard_id !== 'number' ||
    typeof snapshot_at !== 'string' ||
    typeof received !== 'number' ||
    typeof total !== 'number' ||
    typeof complete !== 'boolean'
  ) {
    return undefined;
  }
  return { shard_id, snapshot_at, received, total, complete };
}

function readEvents(body: unknown): GuildEventsResult | undefined {
  if (!isRecord(body) || typeof body.applied !== 'number' || typeof body.ignored !== 'number') {
    return undefined;
  }
  return { applied: body.applied, ignored: body.ignored };
}

function readStatus(body: unknown): BotGuildsStatus | undefined {
  if (!isRecord(body) || typeof body.live !== 'boolean' || !Array.isArray(body.shards)) {
    return undefined;
  }
  return body as unknown as BotGuildsStatus;
}
