/** A shard's report, as `PUT /internal/shards/{shard_id}` takes it. */
export const SHARD_REPORT = {
  status: 'Ready',
  real_latency: 40,
  guilds: 3,
  users: 12,
  uptime: 60,
  total_uptime: 600,
} as const;
