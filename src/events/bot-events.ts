import type { BotStats, ShardStatus } from 'src/bot-reports/shard-stats/shard-stats';

/** A shard's status changed (`previous` null: its first report). */
export interface ShardStatusChange {
  shard_id: number;
  status: ShardStatus;
  previous: ShardStatus | null;
}

/** The totals of `GET /bot-stats` changed. */
export interface BotTotals {
  total_guilds: number;
  total_users: number;
  shards: number;
}

export type BotEventBody =
  { type: 'shard'; data: ShardStatusChange } | { type: 'totals'; data: BotTotals };

/** A bot health event as streamed and kept for resuming: numbered in one sequence for all instances. */
export type BotEvent = BotEventBody & { id: number };

/** What bot health events are derived from: each shard's status, and the totals. */
export interface BotHealth {
  statuses: Record<string, ShardStatus>;
  totals: BotTotals;
}

export function healthOf(stats: BotStats): BotHealth {
  const statuses: Record<string, ShardStatus> = {};
  for (const [shardId, shard] of Object.entries(stats.shard_conns))
    statuses[shardId] = shard.status;
  return {
    statuses,
    totals: {
      total_guilds: stats.total_guilds,
      total_users: stats.total_users,
      shards: Object.keys(stats.shard_conns).length,
    },
  };
}

/**
 * The events that take a client from `previous` to `current`: one per shard whose status changed
 * (in shard order), then the totals if they changed. Latency and uptime change with every report
 * and are left to `GET /bot-stats`.
 */
export function botChanges(previous: BotHealth | null, current: BotHealth): BotEventBody[] {
  const changes: BotEventBody[] = [];
  const shardIds = Object.keys(current.statuses)
    .map(Number)
    .sort((a, b) => a - b);
  for (const shardId of shardIds) {
    const status = current.statuses[shardId];
    const before = previous?.statuses[shardId] ?? null;
    if (status !== before) {
      changes.push({ type: 'shard', data: { shard_id: shardId, status, previous: before } });
    }
  }
  const totals = current.totals;
  const was = previous?.totals;
  if (
    !was ||
    was.total_guilds !== totals.total_guilds ||
    was.total_users !== totals.total_users ||
    was.shards !== totals.shards
  ) {
    changes.push({ type: 'totals', data: totals });
  }
  return changes;
}
