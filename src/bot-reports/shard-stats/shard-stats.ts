/** What a shard may report, and `Unknown` for one that has gone silent. */
export const SHARD_STATUSES = [
  'Idle',
  'Connecting',
  'Connected',
  'Ready',
  'Reconnecting',
  'Closing',
  'Closed',
  'Erroring',
  'Unknown',
] as const;
export type ShardStatus = (typeof SHARD_STATUSES)[number];

/** A shard whose last report is older than this is reported as `Unknown`. */
export const SHARD_SILENCE_MS = 2 * 60_000;

export interface ShardReport {
  shardId: number;
  status: ShardStatus;
  latencyMs: number | null;
  guilds: number;
  users: number;
  uptimeSeconds: number;
  totalUptimeSeconds: number;
  reportedAt: Date;
}

export interface ShardConnection {
  status: ShardStatus;
  /** Milliseconds; -1 before the first heartbeat. */
  real_latency: number;
  guilds: number;
  /** Seconds. */
  uptime: number;
  /** Seconds. */
  total_uptime: number;
}

export interface BotStats {
  shard_conns: Record<string, ShardConnection>;
  total_guilds: number;
  total_users: number;
}

/** `GET /bot-stats` from the shards' last reports, as of `now`. */
export function summariseShards(reports: readonly ShardReport[], now: Date): BotStats {
  const ordered = [...reports].sort((a, b) => a.shardId - b.shardId);
  const shardConns: Record<string, ShardConnection> = {};
  for (const report of ordered) {
    const silent = now.getTime() - report.reportedAt.getTime() > SHARD_SILENCE_MS;
    shardConns[String(report.shardId)] = {
      status: silent ? 'Unknown' : report.status,
      real_latency: report.latencyMs ?? -1,
      guilds: report.guilds,
      uptime: report.uptimeSeconds,
      total_uptime: report.totalUptimeSeconds,
    };
  }
  return {
    shard_conns: shardConns,
    total_guilds: ordered.reduce((sum, report) => sum + report.guilds, 0),
    total_users: ordered.reduce((sum, report) => sum + report.users, 0),
  };
}
