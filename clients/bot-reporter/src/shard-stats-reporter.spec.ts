import {
  createShardStatsReporter,
  ReporterError,
  type FetchLike,
  type ShardStats,
} from 'clients/bot-reporter/src';

interface Put {
  path: string;
  body: ShardStats;
}

/** A service that stores every report; `hold` keeps answers back until released. */
function service(): { fetch: FetchLike; puts: Put[]; hold(): () => void } {
  const puts: Put[] = [];
  let gate: Promise<void> = Promise.resolve();
  return {
    puts,
    hold() {
      let release = (): void => undefined;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return release;
    },
    fetch: async (url, init) => {
      const path = new URL(url).pathname;
      const body = JSON.parse(init.body as string) as ShardStats;
      puts.push({ path, body });
      await gate;
      return Response.json({ shard_id: Number(path.split('/').at(-1)), ...body });
    },
  };
}

const OPTIONS = { baseUrl: 'http://bms.test', token: 'ara_secret', intervalMs: 3_600_000 };

describe('createShardStatsReporter', () => {
  it('reports every shard as the service takes it: whole, non-negative, total at least uptime', async () => {
    const bms = service();
    const reporter = createShardStatsReporter({
      ...OPTIONS,
      fetch: bms.fetch,
      shards: () => [
        {
          id: 0,
          status: 'Ready',
          real_latency: 41.6,
          guilds: 3,
          users: 90,
          uptime: 12.9,
          total_uptime: 5,
        },
        {
          id: 1,
          status: 'Connecting',
          real_latency: -1,
          guilds: -2,
          users: Number.NaN,
          uptime: 0,
          total_uptime: 0.4,
        },
      ],
    });
    await reporter.report();
    expect(bms.puts).toEqual([
      {
        path: '/internal/shards/0',
        body: {
          status: 'Ready',
          real_latency: 42,
          guilds: 3,
          users: 90,
          uptime: 12,
          total_uptime: 12,
        },
      },
      {
        path: '/internal/shards/1',
        body: {
          status: 'Connecting',
          real_latency: null,
          guilds: 0,
          users: 0,
          uptime: 0,
          total_uptime: 0,
        },
      },
    ]);
    await reporter.close();
  });

  it('runs a report asked for during another after it, reading the shards again', async () => {
    const bms = service();
    let status: ShardStats['status'] = 'Connecting';
    const reporter = createShardStatsReporter({
      ...OPTIONS,
      fetch: bms.fetch,
      shards: () => [
        { id: 0, status, real_latency: null, guilds: 0, users: 0, uptime: 0, total_uptime: 0 },
      ],
    });
    const release = bms.hold();
    const first = reporter.report();
    status = 'Ready';
    const second = reporter.report();
    const third = reporter.report();
    release();
    await Promise.all([first, second, third]);
    expect(bms.puts.map((put) => put.body.status)).toEqual(['Connecting', 'Ready']);
    await reporter.close();
  });

  it('reports every shard Closed at close, and refuses reports after it', async () => {
    const bms = service();
    const reporter = createShardStatsReporter({
      ...OPTIONS,
      fetch: bms.fetch,
      shards: () =>
        [0, 1].map((id) => ({
          id,
          status: 'Ready' as const,
          real_latency: 30,
          guilds: 1,
          users: 1,
          uptime: 1,
          total_uptime: 1,
        })),
    });
    await reporter.close();
    expect(bms.puts.map((put) => [put.path, put.body.status])).toEqual([
      ['/internal/shards/0', 'Closed'],
      ['/internal/shards/1', 'Closed'],
    ]);
    await expect(reporter.report()).rejects.toBeInstanceOf(ReporterError);
  });
});
