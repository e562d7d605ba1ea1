// Reports each shard's health (PUT /internal/shards/{id}: status, latency, guilds, users, uptimes)
// every `intervalMs`, for `GET /bot-stats` and the dashboards' bot stream. The service shows a
// shard silent for over 2 minutes as Unknown, so the default interval is well inside it.

import {
  createTransport,
  errorReporter,
  isRecord,
  isShardId,
  positive,
  ReporterError,
  type RequestOptions,
} from './transport.js';

/** A shard's status, as `PUT /internal/shards/{shard_id}` takes it. */
export type ShardStatus =
  | 'Idle'
  | 'Connecting'
  | 'Connected'
  | 'Ready'
  | 'Reconnecting'
  | 'Closing'
  | 'Closed'
  | 'Erroring';

/** `PUT /internal/shards/{shard_id}`: what a shard reports about itself. */
export interface ShardStats {
  status: ShardStatus;
  /** Heartbeat round trip in milliseconds; null before the first heartbeat was acknowledged. */
  real_latency: number | null;
  guilds: number;
  /** Members across the shard's guilds. */
  users: number;
  /** Seconds since the current connection was made. */
  uptime: number;
  /** Seconds since the shard first started; at least `uptime`. */
  total_uptime: number;
}

export interface ShardStatsReporterOptions extends RequestOptions {
  /** The shards this process runs, as they are now: read at every report. */
  shards: () => Iterable<{ id: number } & ShardStats>;
  /** How often every shard is reported. Default 30 s. */
  intervalMs?: number;
  /** Failures of the background reports. Default: a line on stderr. */
  onError?: (error: ReporterError) => void;
}

export interface ShardStatsReporter {
  /** Reports every shard now; rejects with the first failure. */
  report(): Promise<void>;
  /**
   * Stops the timer and reports every shard once more with `status` (`Closed` by default), so
   * dashboards see the process stop rather than a shard gone silent; later calls are refused.
   */
  close(status?: ShardStatus): Promise<void>;
}

export function createShardStatsReporter(options: ShardStatsReporterOptions): ShardStatsReporter {
  const intervalMs = positive('intervalMs', options.intervalMs ?? 30_000);
  const report = errorReporter(options.onError);
  const transport = createTransport(options);
  let closed = false;
  /** One round of reports at a time: a slow service never piles them up. */
  let underWay: Promise<void> | undefined;
  /** A round asked for while one is under way (a shard became ready): it reads the shards anew. */
  let next: Promise<void> | undefined;

  async function send(override?: ShardStatus): Promise<void> {
    const shards = [...options.shards()];
    const results = await Promise.allSettled(
      shards.map(({ id, ...stats }) => {
        if (!isShardId(id)) {
          return Promise.reject(new ReporterError('invalid', `${id} is not a shard id`));
        }
        const body = JSON.stringify(whole({ ...stats, status: override ?? stats.status }));
        return transport.call('PUT', `/internal/shards/${id}`, body, id, readStored);
      }),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  function round(): Promise<void> {
    if (underWay === undefined) {
      underWay = send().finally(() => {
        underWay = undefined;
      });
      return underWay;
    }
    next ??= underWay
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return round();
      });
    return next;
  }

  const timer = setInterval(() => {
    if (!closed && underWay === undefined) round().catch(report);
  }, intervalMs);
  // The reporter serves the bot; it must never be what keeps the process alive.
  timer.unref();

  return {
    report() {
      if (closed) return Promise.reject(new ReporterError('invalid', 'the reporter is closed'));
      return round();
    },
    async close(status = 'Closed') {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await (next ?? underWay)?.catch(() => undefined);
      await send(status);
    },
  };
}

/** The service takes whole, non-negative numbers, and a total uptime at least the uptime. */
function whole(stats: ShardStats): ShardStats {
  const count = (value: number): number =>
    Number.isFinite(value) ? Math.max(0, Math.floor(value)) : 0;
  const uptime = count(stats.uptime);
  return {
    status: stats.status,
    real_latency:
      stats.real_latency === null || !(stats.real_latency >= 0)
        ? null
        : Math.round(stats.real_latency),
    guilds: count(stats.guilds),
    users: count(stats.users),
    uptime,
    total_uptime: Math.max(uptime, count(stats.total_uptime)),
  };
}

function readStored(body: unknown): true | undefined {
  return isRecord(body) && typeof body.shard_id === 'number' ? true : undefined;
}
