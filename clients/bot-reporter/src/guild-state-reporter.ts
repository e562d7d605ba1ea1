// Reports what the bot sees in its guilds (docs/guild-state.md): per shard, a stream of numbered
// reports, batched and sent in order one request at a time, each carrying the guild's hash from the
// reporter's own copy; gaps are replayed, resyncs answered with full states, and a stream another
// process took over is stopped.

import { randomUUID } from 'node:crypto';
import { isSnowflake } from './contract.js';
import {
  MAX_STATE_BATCH_BYTES,
  MAX_STATE_REPORTS,
  type GuildState,
  type GuildStateChannel,
  type GuildStateFields,
  type GuildStateMember,
  type GuildStateReceipt,
  type GuildStateRole,
  type GuildStateStream,
  type GuildStateThread,
} from './guild-state.js';
import { GuildStateCopy, type GuildStateChange } from './guild-state-copy.js';
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

export interface GuildStateReporterOptions extends RequestOptions {
  /**
   * A guild's full state as the bot holds it now (discord.js: its guild cache), or undefined when
   * it holds none. Sent when the service asks for a guild (`resync`), when a stream starts again,
   * and for a change to a guild the reporter was never given whole. Without it, or when it answers
   * undefined, the reporter sends its own copy.
   */
  fullState?: (guildId: string) => GuildState | undefined;
  /** How often queued reports are sent. Default 1 s. */
  flushIntervalMs?: number;
  /**
   * A shard nothing was sent for in this long gets an empty batch at the next flush tick, so the
   * service keeps it live. Default 30 s.
   */
  heartbeatIntervalMs?: number;
  /** Reports per batch, at most 1000. Default 1000. */
  maxBatch?: number;
  /**
   * A batch's body in bytes, at most 1 MiB (the service's limit). A shard whose queue fills a
   * batch (by count or bytes) sends it at once. Default 1 MiB.
   */
  maxBatchBytes?: number;
  /**
   * Reports the service has accepted, kept per shard to send again when it says it missed some
   * (a gap). Past either bound the oldest go; a gap from before them starts a new stream.
   * Defaults 10,000 reports and 16 MiB.
   */
  replayReports?: number;
  replayBytes?: number;
  /**
   * Reports waiting per shard, in bytes, while the service cannot be reached. Past it they are
   * dropped and the shard starts a new stream with every guild's full state once the service
   * answers (which is then cheaper than the queue). Default 64 MiB.
   */
  maxQueuedBytes?: number;
  /** Failures of the background sends (flush ticks, heartbeats) and refused calls. */
  onError?: (error: ReporterError) => void;
}

/**
 * Call each method when the bot has applied the gateway event (stamped `at`, now by default).
 * Nothing throws: a call the service would refuse goes to `onError` as `invalid`. The reporter's
 * copy keeps the objects it is given: pass fresh ones and leave them unchanged.
 */
export interface GuildStateReporter {
  /** `GUILD_CREATE` (a join, the shard's session starting, the end of an outage): the whole guild. */
  guildCreate(shardId: number, state: GuildState, at?: Date): void;
  /** `GUILD_UPDATE`: the guild's own fields. */
  guildUpdate(shardId: number, guildId: string, fields: GuildStateFields, at?: Date): void;
  /** `GUILD_DELETE`: `unavailable` is an outage (the state is kept), otherwise the bot left. */
  guildDelete(shardId: number, guildId: string, unavailable: boolean, at?: Date): void;
  /** `GUILD_ROLE_CREATE` and `GUILD_ROLE_UPDATE`. */
  roleUpsert(shardId: number, guildId: string, role: GuildStateRole, at?: Date): void;
  roleDelete(shardId: number, guildId: string, roleId: string, at?: Date): void;
  /** `CHANNEL_CREATE` and `CHANNEL_UPDATE` (an obfuscated channel as it came). */
  channelUpsert(shardId: number, guildId: string, channel: GuildStateChannel, at?: Date): void;
  /** `CHANNEL_DELETE`: its threads go with it. */
  channelDelete(shardId: number, guildId: string, channelId: string, at?: Date): void;
  /** `THREAD_CREATE` and `THREAD_UPDATE`. */
  threadUpsert(shardId: number, guildId: string, thread: GuildStateThread, at?: Date): void;
  threadDelete(shardId: number, guildId: string, threadId: string, at?: Date): void;
  /**
   * `THREAD_LIST_SYNC`: the threads of `channelIds` (of every channel when absent) are replaced
   * with `threads`.
   */
  threadListSync(
    shardId: number,
    guildId: string,
    threads: GuildStateThread[],
    channelIds?: string[],
    at?: Date,
  ): void;
  /** `GUILD_MEMBER_UPDATE` of the bot's own member. */
  botMemberUpdate(shardId: number, guildId: string, member: GuildStateMember, at?: Date): void;
  /** The shard lost its gateway connection: no heartbeats for it until `resumed`. */
  disconnected(shardId: number): void;
  resumed(shardId: number): void;
  /** The hash of the reporter's copy of a guild (what its last report carried), if it holds one. */
  hash(guildId: string): string | undefined;
  /** Reports the service has not yet accepted, for one shard or all. */
  pending(shardId?: number): number;
  /** Sends every queued report now; rejects with the first failure. */
  flush(): Promise<void>;
  /** Stops the timer and flushes; later calls are refused. */
  close(): Promise<void>;
}

/** One numbered report, serialised once: `{"seq":N,` + `tail`. */
interface Entry {
  seq: number;
  guildId: string;
  full: boolean;
  tail: string;
  tailBytes: number;
}

interface ShardState {
  stream: GuildStateStream;
  startedMs: number;
  /** `{"stream":…,"reports":[`, and with the closing `]}`, its size in bytes. */
  prefix: string;
  overheadBytes: number;
  nextSeq: number;
  /** Not yet accepted, in seq order: the head may be in flight. */
  queue: Entry[];
  queuedBytes: number;
  /** Accepted, kept for a gap, in seq order (contiguous with the queue). */
  replay: Entry[];
  replayBytes: number;
  flushing: Promise<void> | undefined;
  lastSentMs: number;
  connected: boolean;
  /** The queue overflowed: the next send starts a new stream. */
  restart: boolean;
  /** A newer process took the shard over (409): nothing more is sent for it. */
  stopped: boolean;
}

interface HeldGuild {
  shardId: number;
  copy: GuildStateCopy;
  /** The seq of the guild's last report, and of its last `guild_create`, in the current stream. */
  lastSeq: number;
  fullSeq: number;
}

const path = (shardId: number): string => `/internal/shards/${shardId}/guild-state`;

export function createGuildStateReporter(options: GuildStateReporterOptions): GuildStateReporter {
  const flushIntervalMs = positive('flushIntervalMs', options.flushIntervalMs ?? 1_000);
  const heartbeatIntervalMs = positive(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs ?? 30_000,
  );
  const maxBatch = wholeUpTo('maxBatch', options.maxBatch ?? MAX_STATE_REPORTS, MAX_STATE_REPORTS);
  const maxBatchBytes = wholeUpTo(
    'maxBatchBytes',
    options.maxBatchBytes ?? MAX_STATE_BATCH_BYTES,
    MAX_STATE_BATCH_BYTES,
  );
  const replayReports = positive('replayReports', options.replayReports ?? 10_000);
  const replayBytes = positive('replayBytes', options.replayBytes ?? 16 * 2 ** 20);
  const maxQueuedBytes = positive('maxQueuedBytes', options.maxQueuedBytes ?? 64 * 2 ** 20);
  const report = errorReporter(options.onError);

  const shards = new Map<number, ShardState>();
  const guilds = new Map<string, HeldGuild>();
  let closed = false;
  /** Set while a new stream is given every guild's full state. */
  let refilling = false;
  const transport = createTransport(options, (shardId) => {
    const state = shards.get(shardId);
    if (state !== undefined) state.lastSentMs = Date.now();
  });

  function shard(shardId: number): ShardState {
    let state = shards.get(shardId);
    if (state === undefined) {
      state = {
        ...streamFields(Date.now()),
        nextSeq: 1,
        queue: [],
        queuedBytes: 0,
        replay: [],
        replayBytes: 0,
        flushing: undefined,
        lastSentMs: -Infinity,
        connected: true,
        restart: false,
        stopped: false,
      };
      shards.set(shardId, state);
    }
    return state;
  }

  function streamFields(
    startedMs: number,
  ): Pick<ShardState, 'stream' | 'startedMs' | 'prefix' | 'overheadBytes'> {
    const stream = { id: randomUUID(), started_at: new Date(startedMs).toISOString() };
    const prefix = `{"stream":${JSON.stringify(stream)},"reports":[`;
    return { stream, startedMs, prefix, overheadBytes: byteLength(prefix) + 2 };
  }

  /** The guild's state as the bot holds it now: its cache when given, else the reporter's copy. */
  function fullStateOf(guildId: string): GuildState | undefined {
    if (options.fullState !== undefined) {
      try {
        const state = options.fullState(guildId);
        if (state !== undefined && state.id === guildId) return state;
      } catch (error) {
        report(new ReporterError('invalid', `fullState(${guildId}) threw`, { cause: error }));
      }
    }
    const held = guilds.get(guildId);
    return held === undefined || held.copy.unavailable ? undefined : held.copy.state();
  }

  /** What the bot calls: checked, then recorded. */
  function accept(shardId: number, guildId: string, change: GuildStateChange, at: Date): void {
    if (closed || !isShardId(shardId) || !isSnowflake(guildId) || Number.isNaN(at.getTime())) {
      const why = closed ? 'the reporter is closed' : 'not a shard id, guild id and date';
      const message = `${change.type} of ${guildId} on shard ${shardId} not sent: ${why}`;
      report(new ReporterError('invalid', message, { shardId }));
      return;
    }
    record(shardId, guildId, change, at);
  }

  /** Applies a change to the copy, then queues it with the copy's hash. */
  function record(shardId: number, guildId: string, change: GuildStateChange, at: Date): void {
    let held = guilds.get(guildId);
    switch (change.type) {
      case 'guild_create': {
        let copy: GuildStateCopy;
        try {
          if (change.guild.id !== guildId) throw new RangeError(`its id is ${change.guild.id}`);
          copy = new GuildStateCopy(change.guild);
        } catch (error) {
          const message = `guild_create of ${guildId} not sent: ${(error as Error).message}`;
          report(new ReporterError('invalid', message, { shardId, cause: error }));
          return;
        }
        held = { shardId, copy, lastSeq: 0, fullSeq: 0 };
        guilds.set(guildId, held);
        break;
      }
      case 'guild_delete':
        if (!change.unavailable) {
          guilds.delete(guildId);
          held = undefined;
        } else if (held === undefined) {
          // An outage of a guild never reported: there is nothing to keep.
          return;
        } else {
          held.copy.unavailable = true;
        }
        break;
      default: {
        if (held === undefined) {
          // The bot's cache already holds this change: its full state says it all.
          const full = fullStateOf(guildId);
          if (full !== undefined) {
            record(shardId, guildId, { type: 'guild_create', guild: full }, at);
            return;
          }
          const message = `${change.type} of ${guildId} not sent: the guild was never reported whole (guildCreate)`;
          report(new ReporterError('invalid', message, { shardId }));
          return;
        }
        held.copy.apply(change);
      }
    }
    enqueue(shardId, guildId, change, at.toISOString(), held);
  }

  function enqueue(
    shardId: number,
    guildId: string,
    change: GuildStateChange,
    at: string,
    held: HeldGuild | undefined,
  ): void {
    const state = shard(shardId);
    // Stopped: another process reports the shard. Restarting: the new stream's full states hold
    // this change already (the copies, and the bot's cache, have it).
    if (state.stopped || state.restart) return;
    const hash = held?.copy.hash();
    const json = JSON.stringify({ ...change, guild_id: guildId, at, hash });
    const entry: Entry = {
      seq: state.nextSeq,
      guildId,
      full: change.type === 'guild_create',
      tail: json.slice(1),
      tailBytes: byteLength(json) - 1,
    };
    const size = entryBytes(entry);
    if (state.overheadBytes + size > maxBatchBytes) {
      report(
        new ReporterError(
          'invalid',
          `${change.type} of ${guildId} not sent: ${size} bytes, more than a batch may carry (${maxBatchBytes})`,
          { shardId, dropped: 1 },
        ),
      );
      return;
    }
    state.nextSeq += 1;
    state.queue.push(entry);
    state.queuedBytes += size;
    if (held !== undefined) {
      held.lastSeq = entry.seq;
      if (entry.full) held.fullSeq = entry.seq;
    }
    // A new stream's full states are bounded by the copies themselves.
    if (state.queuedBytes > maxQueuedBytes && !refilling) {
      state.restart = true;
      report(
        new ReporterError(
          'overflow',
          `shard ${shardId}: ${state.queue.length} reports waiting (over ${maxQueuedBytes} bytes); a new stream will carry every guild's full state`,
          { shardId, dropped: state.queue.length },
        ),
      );
      return;
    }
    const full =
      state.queue.length >= maxBatch || state.overheadBytes + state.queuedBytes >= maxBatchBytes;
    if (full && state.flushing === undefined && !transport.paused()) {
      flushShard(shardId, state).catch(report);
    }
  }

  /** A new stream for the shard, carrying every guild's full state it holds. */
  function restartStream(shardId: number, state: ShardState): void {
    // Never the same start as the stream it replaces: the service orders streams by it.
    Object.assign(state, streamFields(Math.max(Date.now(), state.startedMs + 1)));
    state.nextSeq = 1;
    state.queue = [];
    state.queuedBytes = 0;
    state.replay = [];
    state.replayBytes = 0;
    state.restart = false;
    const at = new Date();
    refilling = true;
    try {
      for (const [guildId, held] of [...guilds]) {
        if (held.shardId !== shardId) continue;
        held.lastSeq = 0;
        held.fullSeq = 0;
        sendFullState(shardId, guildId, at);
      }
    } finally {
      refilling = false;
    }
  }

  /** Queues the guild's `guild_create`, if the bot still holds it. */
  function sendFullState(shardId: number, guildId: string, at = new Date()): void {
    const full = fullStateOf(guildId);
    // A guild the bot no longer holds (it left, or it is in an outage): its GUILD_CREATE will come.
    if (full !== undefined) record(shardId, guildId, { type: 'guild_create', guild: full }, at);
  }

  /** The service asks for a guild's full state (its copy differs, or it holds none). */
  function resync(shardId: number, guildId: string, nextSeq: number): void {
    const held = guilds.get(guildId);
    if (held !== undefined && held.fullSeq > 0 && held.lastSeq === held.fullSeq) {
      // Its full state, and nothing since, is on its way…
      if (held.fullSeq >= nextSeq) return;
      // …or was accepted, and the service still differs: sent again, it would differ again.
      report(
        new ReporterError(
          'drift',
          `guild ${guildId}: the service still differs from the full state it accepted (seq ${held.fullSeq}); not sent again until the guild changes`,
          { shardId },
        ),
      );
      return;
    }
    sendFullState(shardId, guildId);
  }

  function takeBatch(state: ShardState): Entry[] {
    const batch: Entry[] = [];
    let bytes = state.overheadBytes;
    for (const entry of state.queue) {
      const size = entryBytes(entry) + (batch.length > 0 ? 1 : 0);
      if (batch.length === maxBatch || bytes + size > maxBatchBytes) break;
      batch.push(entry);
      bytes += size;
    }
    return batch;
  }

  /** The service has everything before `nextSeq`: those reports move to the replay buffer. */
  function acknowledge(state: ShardState, nextSeq: number): void {
    let count = 0;
    while (count < state.queue.length && state.queue[count].seq < nextSeq) count += 1;
    for (const entry of state.queue.splice(0, count)) {
      const size = entryBytes(entry);
      state.queuedBytes -= size;
      state.replay.push(entry);
      state.replayBytes += size;
    }
    let evicted = 0;
    while (
      evicted < state.replay.length &&
      (state.replay.length - evicted > replayReports || state.replayBytes > replayBytes)
    ) {
      state.replayBytes -= entryBytes(state.replay[evicted]);
      evicted += 1;
    }
    state.replay.splice(0, evicted);
  }

  /** Puts the reports from `seq` on back in the queue; false when the buffer no longer holds it. */
  function rewind(state: ShardState, seq: number): boolean {
    const first = state.replay[0];
    if (first === undefined || first.seq > seq || state.replay[seq - first.seq]?.seq !== seq) {
      return false;
    }
    const again = state.replay.splice(seq - first.seq);
    for (const entry of again) {
      const size = entryBytes(entry);
      state.replayBytes -= size;
      state.queuedBytes += size;
    }
    state.queue = again.concat(state.queue);
    return true;
  }

  /** Acts on the service's answer to `batch`: what it accepted, what it missed, what it needs. */
  function settle(
    shardId: number,
    state: ShardState,
    batch: Entry[],
    receipt: GuildStateReceipt,
  ): void {
    const next = receipt.gap?.expected_seq ?? receipt.next_seq;
    if (next > state.nextSeq) {
      // The service counts reports this stream never numbered: start afresh rather than have
      // the next ones taken for duplicates.
      restartStream(shardId, state);
      return;
    }
    acknowledge(state, next);
    const head = state.queue[0]?.seq ?? state.nextSeq;
    if (next < head) {
      if (!rewind(state, next)) restartStream(shardId, state);
    } else if (receipt.gap !== null && batch.length > 0 && batch[0].seq === next) {
      throw new ReporterError(
        'unavailable',
        `POST ${path(shardId)}: the service asked for seq ${next} again after a batch that began with it`,
        { shardId },
      );
    }
    for (const guildId of receipt.resync) resync(shardId, guildId, next);
  }

  /** Drops a refused batch; the reports after it take its numbers, and its guilds are resent. */
  function refuse(
    shardId: number,
    state: ShardState,
    batch: Entry[],
    error: ReporterError,
  ): ReporterError {
    const dropped = state.queue.splice(0, batch.length);
    let seq = dropped[0].seq;
    state.queuedBytes = 0;
    for (const entry of state.queue) {
      entry.seq = seq++;
      state.queuedBytes += entryBytes(entry);
    }
    state.nextSeq = seq;
    /** Each guild the batch held, and whether its full state was among them. */
    const touched = new Map<string, boolean>();
    for (const entry of dropped) {
      touched.set(entry.guildId, (touched.get(entry.guildId) ?? false) || entry.full);
    }
    for (const held of guilds.values()) {
      if (held.shardId === shardId) held.lastSeq = held.fullSeq = 0;
    }
    for (const entry of state.replay.concat(state.queue)) {
      const held = guilds.get(entry.guildId);
      if (held === undefined) continue;
      held.lastSeq = entry.seq;
      if (entry.full) held.fullSeq = entry.seq;
    }
    for (const [guildId, hadFullState] of touched) {
      const held = guilds.get(guildId);
      // Its later reports (hashed with the dropped ones applied) make the service ask for it.
      if (held === undefined || held.lastSeq >= dropped[0].seq) continue;
      // Its full state was refused: sent again, it would be refused again.
      if (hadFullState) guilds.delete(guildId);
      else sendFullState(shardId, guildId);
    }
    return new ReporterError(error.kind, error.message, {
      shardId,
      status: error.status,
      code: error.code,
      details: error.details,
      dropped: dropped.length,
      cause: error,
    });
  }

  async function drain(shardId: number, state: ShardState, heartbeat: boolean): Promise<void> {
    let sent = false;
    while (!state.stopped) {
      if (state.restart) {
        restartStream(shardId, state);
      }
      if (state.queue.length === 0 && (sent || !heartbeat)) return;
      const batch = takeBatch(state);
      if (batch.length === 0 && state.queue.length > 0) {
        // A report larger than a batch is refused when queued; were one there, it would block
        // the shard's stream for good.
        const message = `shard ${shardId}: seq ${state.queue[0].seq} does not fit in a batch`;
        throw refuse(shardId, state, [state.queue[0]], new ReporterError('invalid', message));
      }
      const body = `${state.prefix}${batch.map(reportText).join(',')}]}`;
      let receipt: GuildStateReceipt;
      try {
        receipt = await transport.call('POST', path(shardId), body, shardId, readReceipt);
      } catch (error) {
        if (!(error instanceof ReporterError) || error.kind !== 'refused') throw error;
        if (error.status === 409) throw stop(shardId, state, error);
        // A stream that went on meanwhile (a gap, an overflow) has renumbered what was sent.
        if (batch.length === 0 || state.queue[0] !== batch[0]) throw error;
        throw refuse(shardId, state, batch, error);
      }
      sent = true;
      settle(shardId, state, batch, receipt);
    }
  }

  function stop(shardId: number, state: ShardState, error: ReporterError): ReporterError {
    state.stopped = true;
    const dropped = state.queue.length;
    state.queue = [];
    state.queuedBytes = 0;
    state.replay = [];
    state.replayBytes = 0;
    return new ReporterError(
      'conflict',
      `shard ${shardId}: another process started a newer stream and reports the shard now; this one stopped (${error.message})`,
      { shardId, status: error.status, code: error.code, dropped, cause: error },
    );
  }

  function flushShard(shardId: number, state: ShardState, heartbeat = false): Promise<void> {
    // Started in a microtask, so that `flushing` is set before the drain can queue anything.
    state.flushing ??= Promise.resolve()
      .then(() => drain(shardId, state, heartbeat))
      .finally(() => {
        state.flushing = undefined;
      });
    return state.flushing;
  }

  function tick(): void {
    if (transport.paused()) return;
    const now = Date.now();
    for (const [shardId, state] of shards) {
      // A shard whose batch is still being sent (or retried) is left to it.
      if (state.stopped || state.flushing !== undefined) continue;
      const quiet = now - state.lastSentMs >= heartbeatIntervalMs;
      if (state.queue.length > 0 || state.restart || (quiet && state.connected)) {
        flushShard(shardId, state, true).catch(report);
      }
    }
  }

  const timer = setInterval(tick, flushIntervalMs);
  // The reporter serves the bot; it must never be what keeps the process alive.
  timer.unref();

  async function flush(): Promise<void> {
    const flushes: Promise<void>[] = [];
    for (const [shardId, state] of shards) {
      if (state.stopped) continue;
      if (state.queue.length > 0 || state.restart || state.flushing !== undefined) {
        flushes.push(flushShard(shardId, state));
      }
    }
    const failed = (await Promise.allSettled(flushes)).find(
      (result) => result.status === 'rejected',
    );
    if (failed !== undefined) throw failed.reason;
  }

  const now = (): Date => new Date();
  return {
    guildCreate: (shardId, state, at = now()) =>
      accept(shardId, state.id, { type: 'guild_create', guild: state }, at),
    guildUpdate: (shardId, guildId, fields, at = now()) =>
      accept(shardId, guildId, { type: 'guild_update', guild: fields }, at),
    guildDelete: (shardId, guildId, unavailable, at = now()) =>
      accept(shardId, guildId, { type: 'guild_delete', unavailable }, at),
    roleUpsert: (shardId, guildId, role, at = now()) =>
      accept(shardId, guildId, { type: 'role_upsert', role }, at),
    roleDelete: (shardId, guildId, roleId, at = now()) =>
      accept(shardId, guildId, { type: 'role_delete', role_id: roleId }, at),
    channelUpsert: (shardId, guildId, channel, at = now()) =>
      accept(shardId, guildId, { type: 'channel_upsert', channel }, at),
    channelDelete: (shardId, guildId, channelId, at = now()) =>
      accept(shardId, guildId, { type: 'channel_delete', channel_id: channelId }, at),
    threadUpsert: (shardId, guildId, thread, at = now()) =>
      accept(shardId, guildId, { type: 'thread_upsert', thread }, at),
    threadDelete: (shardId, guildId, threadId, at = now()) =>
      accept(shardId, guildId, { type: 'thread_delete', thread_id: threadId }, at),
    threadListSync: (shardId, guildId, threads, channelIds, at = now()) =>
      accept(
        shardId,
        guildId,
        channelIds === undefined
          ? { type: 'thread_list_sync', threads }
          : { type: 'thread_list_sync', channel_ids: channelIds, threads },
        at,
      ),
    botMemberUpdate: (shardId, guildId, member, at = now()) =>
      accept(shardId, guildId, { type: 'bot_member_update', member }, at),
    disconnected(shardId) {
      if (isShardId(shardId)) shard(shardId).connected = false;
    },
    resumed(shardId) {
      if (isShardId(shardId)) shard(shardId).connected = true;
    },
    hash: (guildId) => guilds.get(guildId)?.copy.hash(),
    pending(shardId) {
      if (shardId !== undefined) return shards.get(shardId)?.queue.length ?? 0;
      let total = 0;
      for (const state of shards.values()) total += state.queue.length;
      return total;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** `{"seq":N,` and the tail. */
function entryBytes(entry: Entry): number {
  return 8 + String(entry.seq).length + entry.tailBytes;
}

function reportText(entry: Entry): string {
  return `{"seq":${entry.seq},${entry.tail}`;
}

function readReceipt(body: unknown): GuildStateReceipt | undefined {
  if (!isRecord(body)) return undefined;
  const { applied, duplicates, next_seq, gap, resync } = body;
  if (
    typeof applied !== 'number' ||
    typeof duplicates !== 'number' ||
    !Number.isInteger(next_seq) ||
    !Array.isArray(resync) ||
    !resync.every((id) => typeof id === 'string')
  ) {
    return undefined;
  }
  if (gap !== null) {
    if (
      !isRecord(gap) ||
      !Number.isInteger(gap.expected_seq) ||
      typeof gap.received_seq !== 'number'
    ) {
      return undefined;
    }
  }
  return body as unknown as GuildStateReceipt;
}
