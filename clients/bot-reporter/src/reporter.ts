import {
  isSnowflake,
  MAX_EVENT_BATCH,
  MAX_SNAPSHOT_PART,
  shardOfGuild,
  type ApiErrorBody,
  type BotGuildsStatus,
  type GuildEvent,
  type GuildEventBatch,
  type GuildEventsResult,
  type GuildEventType,
  type GuildSnapshotPart,
  type GuildSnapshotProgress,
} from './contract.js';

/** The global `fetch` fits; a test's or a proxy's can stand in. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * - `refused`: the service answered 4xx other than 429 (a bad token, a body it rejects). Resending
 *   would be refused again, so it is not retried; a refused event batch is dropped (`dropped`).
 * - `unavailable`: no answer, a 5xx or a 429, still so after the retries. Queued events are kept
 *   and sent again at the next tick.
 * - `incomplete`: every part of a snapshot was accepted but the service does not hold it whole.
 * - `overflow`: a shard's queue was full, its oldest events were dropped (`dropped`).
 * - `invalid`: an argument the service would refuse (caught before sending), or a closed reporter.
 */
export type ReporterErrorKind = 'refused' | 'unavailable' | 'incomplete' | 'overflow' | 'invalid';

export class ReporterError extends Error {
  override readonly name = 'ReporterError';
  readonly kind: ReporterErrorKind;
  readonly shardId: number | undefined;
  /** The HTTP status of the service's answer, when there was one. */
  readonly status: number | undefined;
  /** The service's error code (`BadRequest`, `Restricted`, `RateLimited`, …). */
  readonly code: string | undefined;
  readonly details: ApiErrorBody['details'];
  /**
   * Guild events lost with this error: the service keeps those guilds as it last heard of them
   * until the shard's next snapshot.
   */
  readonly dropped: number;

  constructor(
    kind: ReporterErrorKind,
    message: string,
    extra: {
      shardId?: number;
      status?: number;
      code?: string;
      details?: ApiErrorBody['details'];
      dropped?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: extra.cause });
    this.kind = kind;
    this.shardId = extra.shardId;
    this.status = extra.status;
    this.code = extra.code;
    this.details = extra.details;
    this.dropped = extra.dropped ?? 0;
  }
}

export interface MembershipReporterOptions {
  /** Where the service is, e.g. `https://bms.example`. */
  baseUrl: string;
  /** An API token (`ara_…`) of a `ROOT_USERS` user. */
  token: string;
  fetch?: FetchLike;
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
  /** Retries of one request (no answer, 5xx, 429) before it fails. Default 4. */
  maxRetries?: number;
  /** The first retry's delay, doubled at each retry (with jitter). Default 500 ms. */
  retryDelayMs?: number;
  /** A `Retry-After` longer than this fails the request instead of waiting it out. Default 60 s. */
  maxRetryWaitMs?: number;
  /** Per request, the answer's body included. Default 10 s. */
  timeoutMs?: number;
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

type Method = 'GET' | 'PUT' | 'POST';

export function createMembershipReporter(options: MembershipReporterOptions): MembershipReporter {
  const baseUrl = new URL(options.baseUrl).href.replace(/\/+$/, '');
  if (options.token === '') throw new TypeError('token must be an API token of a ROOT_USERS user');
  const fetchImpl: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const flushIntervalMs = positive('flushIntervalMs', options.flushIntervalMs ?? 5_000);
  const heartbeatIntervalMs = positive(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs ?? 30_000,
  );
  const maxBatch = positive('maxBatch', options.maxBatch ?? MAX_EVENT_BATCH);
  if (maxBatch > MAX_EVENT_BATCH || !Number.isInteger(maxBatch)) {
    throw new RangeError(`maxBatch must be a whole number from 1 to ${MAX_EVENT_BATCH}`);
  }
  const maxQueued = positive('maxQueuedPerShard', options.maxQueuedPerShard ?? 100_000);
  const maxRetries = options.maxRetries ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 60_000;
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
  // Left unreported, a feed that stopped working would only show as a service that distrusts it.
  const onError =
    options.onError ?? ((error: ReporterError) => console.error(`[bot-reporter] ${error.message}`));

  const shards = new Map<number, ShardState>();
  const snapshotsUnderWay = new Set<Promise<unknown>>();
  /** A 429 holds every request until then: the service limits per user, not per shard. */
  let pausedUntil = 0;
  let closed = false;

  const report = (error: unknown): void => {
    try {
      onError(
        error instanceof ReporterError
          ? error
          : new ReporterError('unavailable', String(error), { cause: error }),
      );
    } catch (thrown) {
      // Thrown from a timer or a bot's event handler, it would take the bot down.
      console.error('[bot-reporter] onError threw', thrown);
    }
  };

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

  async function once<T>(
    method: Method,
    path: string,
    body: unknown,
    shardId: number | undefined,
    read: (json: unknown) => T | undefined,
  ): Promise<{ value: T } | { failure: ReporterError; waitMs?: number }> {
    if (shardId !== undefined) shard(shardId).lastSentMs = Date.now();
    let response: Response;
    try {
      response = await fetchImpl(`${baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.token}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const message = `${method} ${path}: ${describeFailure(error, timeoutMs)}`;
      return { failure: new ReporterError('unavailable', message, { shardId, cause: error }) };
    }
    if (response.ok) {
      const value = read(await response.json().catch(() => undefined));
      if (value !== undefined) return { value };
      const message = `${method} ${path}: ${response.status} with an answer not as documented`;
      return {
        failure: new ReporterError('unavailable', message, { shardId, status: response.status }),
      };
    }
    const error = await readError(response);
    const failure = new ReporterError(
      response.status === 429 || response.status >= 500 ? 'unavailable' : 'refused',
      `${method} ${path}: ${response.status} ${error.code}: ${error.message}`,
      { shardId, status: response.status, code: error.code, details: error.details },
    );
    if (failure.kind === 'refused') throw failure;
    if (response.status !== 429) return { failure };
    const waitMs = retryAfterMs(response.headers.get('retry-after'), Date.now());
    if (waitMs !== undefined) pausedUntil = Math.max(pausedUntil, Date.now() + waitMs);
    return { failure, waitMs };
  }

  /** One request, retried with backoff on no answer, 5xx and 429 (after its Retry-After). */
  async function call<T>(
    method: Method,
    path: string,
    body: unknown,
    shardId: number | undefined,
    read: (json: unknown) => T | undefined,
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const paused = pausedUntil - Date.now();
      if (paused > maxRetryWaitMs) {
        throw new ReporterError(
          'unavailable',
          `${method} ${path}: rate limited for ${Math.ceil(paused / 1000)} s more`,
          { shardId, status: 429, code: 'RateLimited' },
        );
      }
      if (paused > 0) await sleep(paused);
      const outcome = await once(method, path, body, shardId, read);
      if ('value' in outcome) return outcome.value;
      const delay = outcome.waitMs ?? backoff(retryDelayMs, attempt);
      if (attempt >= maxRetries || delay > maxRetryWaitMs) throw outcome.failure;
      // A 429's wait is already in pausedUntil, which the next attempt waits out.
      if (outcome.waitMs === undefined) await sleep(delay);
    }
  }

  /** Sends the shard's queue in batches until it is empty; with `heartbeat`, at least one batch. */
  async function drain(shardId: number, state: ShardState, heartbeat: boolean): Promise<void> {
    let sent = false;
    while (state.queue.size > 0 || (heartbeat && !sent)) {
      const batch = [...take(state.queue.values(), maxBatch)];
      const body: GuildEventBatch = { events: batch.map((queued) => queued.event) };
      try {
        await call('POST', `/internal/shards/${shardId}/guild-events`, body, shardId, readEvents);
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
    if (now < pausedUntil) return;
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
    if (state.queue.size >= maxBatch && state.flushing === undefined && Date.now() >= pausedUntil) {
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
      progress = await call('PUT', path, part, shardId, readProgress);
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
    status: () => call('GET', '/internal/bot-guilds', undefined, undefined, readStatus),
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled(snapshotsUnderWay);
      await flush();
    },
  };
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be above 0`);
  return value;
}

function isShardId(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 65_535;
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

function sleep(ms: number): Promise<void> {
  // Not unref()ed, unlike the tick: a retry is part of a request someone is waiting for (close()
  // at shutdown among them), and a process must not exit in the middle of it.
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Exponential, with jitter so that many shards refused at once do not come back at once. */
function backoff(baseMs: number, attempt: number): number {
  return baseMs * 2 ** attempt * (0.5 + Math.random() / 2);
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from `now`. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  // Duck-typed: fetch's errors may come from another realm (a test runner's vm), where
  // `instanceof Error` is false.
  if (!isRecord(error) || typeof error.message !== 'string') return String(error);
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  // Node's fetch says only "fetch failed"; the cause says why (ECONNREFUSED, a DNS failure, …).
  const { cause } = error;
  return isRecord(cause) && typeof cause.message === 'string' && cause.message !== ''
    ? `${error.message}: ${cause.message}`
    : error.message;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

async function readError(response: Response): Promise<ApiErrorBody> {
  const body: unknown = await response.json().catch(() => undefined);
  if (isRecord(body) && typeof body.message === 'string' && typeof body.code === 'string') {
    const details = Array.isArray(body.details)
      ? (body.details as NonNullable<ApiErrorBody['details']>)
      : undefined;
    return { message: body.message, code: body.code, details };
  }
  return { message: response.statusText || 'no error body', code: `HTTP ${response.status}` };
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
