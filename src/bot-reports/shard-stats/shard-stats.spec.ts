import { summariseShards, type ShardReport } from 'src/bot-reports/shard-stats/shard-stats';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const report = (shardId: number, overrides: Partial<ShardReport> = {}): ShardReport => ({
  shardId,
  status: 'Ready',
  latencyMs: 42,
  guilds: 1000,
  users: 50_000,
  uptimeSeconds: 3600,
  totalUptimeSeconds: 86_400,
  reportedAt: new Date(NOW.getTime() - 10_000),
  ...overrides,
});

describe('bot stats from shard reports', () => {
  it('keys shards by id as strings and sums guilds and users', () => {
    const stats = summariseShards([report(1, { guilds: 5, users: 7 }), report(0)], NOW);
    expect(Object.keys(stats.shard_conns)).toEqual(['0', '1']);
    expect(stats.shard_conns['0']).toEqual({
      status: 'Ready',
      real_latency: 42,
      guilds: 1000,
      uptime: 3600,
      total_uptime: 86_400,
    });
    expect(stats.total_guilds).toBe(1005);
    expect(stats.total_users).toBe(50_007);
  });

  it.each([
    ['reported just now', 0, 'Ready'],
    ['silent for exactly 2 minutes', 120_000, 'Ready'],
    ['silent for just over 2 minutes', 120_001, 'Unknown'],
    ['silent for a day', 86_400_000, 'Unknown'],
  ])('a shard %s is %s', (_name, silenceMs, status) => {
    const stats = summariseShards(
      [report(0, { reportedAt: new Date(NOW.getTime() - silenceMs) })],
      NOW,
    );
    expect(stats.shard_conns['0'].status).toBe(status);
  });

  it('shows a latency not measured yet as -1', () => {
    expect(
      summariseShards([report(3, { latencyMs: null })], NOW).shard_conns['3'].real_latency,
    ).toBe(-1);
  });

  it('answers zeros without shards', () => {
    expect(summariseShards([], NOW)).toEqual({ shard_conns: {}, total_guilds: 0, total_users: 0 });
  });
});
