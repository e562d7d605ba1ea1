import { botChanges, healthOf, type BotHealth } from 'src/events/bot-events';
import type { BotStats } from 'src/bot-reports/shard-stats/shard-stats';

type Shard = BotStats['shard_conns'][string];

function shard(status: string): Shard {
  return { status, real_latency: 40, guilds: 10, uptime: 5, total_uptime: 9 } as Shard;
}

function health(statuses: Record<string, string>, guilds = 20, users = 300): BotHealth {
  return healthOf({
    shard_conns: Object.fromEntries(Object.entries(statuses).map(([id, s]) => [id, shard(s)])),
    total_guilds: guilds,
    total_users: users,
  });
}

describe('bot health changes', () => {
  it.each([
    {
      name: 'first state: every shard, then the totals',
      previous: null,
      current: health({ '1': 'Ready', '0': 'Connecting' }),
      expected: [
        { type: 'shard', data: { shard_id: 0, status: 'Connecting', previous: null } },
        { type: 'shard', data: { shard_id: 1, status: 'Ready', previous: null } },
        { type: 'totals', data: { total_guilds: 20, total_users: 300, shards: 2 } },
      ],
    },
    {
      name: 'nothing changed',
      previous: health({ '0': 'Ready' }),
      current: health({ '0': 'Ready' }),
      expected: [],
    },
    {
      name: 'a status changed, totals the same',
      previous: health({ '0': 'Ready', '1': 'Ready' }),
      current: health({ '0': 'Ready', '1': 'Unknown' }),
      expected: [{ type: 'shard', data: { shard_id: 1, status: 'Unknown', previous: 'Ready' } }],
    },
    {
      name: 'totals changed only',
      previous: health({ '0': 'Ready' }, 20, 300),
      current: health({ '0': 'Ready' }, 21, 300),
      expected: [{ type: 'totals', data: { total_guilds: 21, total_users: 300, shards: 1 } }],
    },
    {
      name: 'a new shard: its status and the shard count',
      previous: health({ '0': 'Ready' }),
      current: health({ '0': 'Ready', '10': 'Idle' }),
      expected: [
        { type: 'shard', data: { shard_id: 10, status: 'Idle', previous: null } },
        { type: 'totals', data: { total_guilds: 20, total_users: 300, shards: 2 } },
      ],
    },
  ])('$name', ({ previous, current, expected }) => {
    expect(botChanges(previous, current)).toEqual(expected);
  });

  it('orders shards numerically, not as text', () => {
    const changes = botChanges(null, health({ '10': 'Ready', '2': 'Ready', '1': 'Ready' }));
    expect(changes.filter((c) => c.type === 'shard').map((c) => c.data)).toEqual([
      expect.objectContaining({ shard_id: 1 }),
      expect.objectContaining({ shard_id: 2 }),
      expect.objectContaining({ shard_id: 10 }),
    ]);
  });
});
