import type { GuildState } from 'clients/bot-reporter/src/guild-state';
import {
  capExceeded,
  GUILDS_AT_ONCE,
  heldGroups,
  HELD_BYTES_AT_ONCE,
} from 'src/bot-reports/guild-state/guild-state-fold';
import { notAhead } from 'src/bot-reports/report-time';

const MiB = 1_048_576;
const ids = (count: number): string[] => Array.from({ length: count }, (_, i) => `g${i}`);
const sized = (sizes: number[]): Map<string, { bytes: number }> =>
  new Map(sizes.map((bytes, i) => [`g${i}`, { bytes }]));

describe('heldGroups: the held states a batch reads at once', () => {
  it.each([
    ['no guilds', [], []],
    ['small guilds, GUILDS_AT_ONCE a group', Array(60).fill(1_000), [25, 25, 10]],
    ['large guilds, by bytes', Array(10).fill(0.9 * MiB), [4, 4, 2]],
    ['one guild over the bytes alone', [5 * MiB, 1_000, 1_000], [1, 2]],
    ['a large one after small ones starts a group', [1_000, 1_000, 4 * MiB, 1_000], [2, 1, 1]],
  ])('%s', (_name, sizes: number[], expected: number[]) => {
    const groups = heldGroups(ids(sizes.length), sized(sizes));
    expect(groups.map((group) => group.length)).toEqual(expected);
    expect(groups.flat()).toEqual(ids(sizes.length));
    for (const group of groups) {
      const bytes = group.reduce((sum, id) => sum + sizes[Number(id.slice(1))], 0);
      expect(group.length).toBeLessThanOrEqual(GUILDS_AT_ONCE);
      // One guild alone may be larger: it is at most what one batch can carry.
      if (group.length > 1) expect(bytes).toBeLessThanOrEqual(HELD_BYTES_AT_ONCE);
    }
  });
});

describe("capExceeded: a guild's state within what a guild_create may hold", () => {
  const state = (roles: number, channels: number, threads: number): GuildState => ({
    id: '1',
    name: 'g',
    icon: null,
    owner_id: '2',
    roles: ids(roles).map((id) => ({
      id,
      name: id,
      permissions: '0',
      position: 0,
      managed: false,
    })),
    channels: ids(channels).map((id) => ({
      id,
      type: 0,
      name: id,
      position: 0,
      parent_id: null,
      flags: 0,
      permission_overwrites: [],
    })),
    threads: ids(threads).map((id) => ({
      id,
      type: 11,
      name: id,
      parent_id: '3',
      flags: 0,
      archived: false,
    })),
    bot_member: { user_id: '4', roles: [], communication_disabled_until: null },
  });
  it.each([
    ['at every cap', state(250, 500, 2_000), 1_048_576, null],
    ['a role past', state(251, 0, 0), 100, '250 roles'],
    ['a channel past', state(0, 501, 0), 100, '500 channels'],
    ['a thread past', state(0, 0, 2_001), 100, '2000 threads'],
    ['a byte past', state(1, 1, 1), 1_048_577, '1048576 bytes of JSON (what one batch can carry)'],
  ])('%s', (_name, guild: GuildState, bytes: number, expected: string | null) => {
    expect(capExceeded(guild, bytes)).toBe(expected);
  });
});

describe('notAhead: a reported time as the feeds order it', () => {
  const now = Date.parse('2026-12-01T12:00:00.000Z');
  it.each([
    ['in the past', '2026-12-01T11:00:00.000Z', '2026-12-01T11:00:00.000Z'],
    ['now', '2026-12-01T12:00:00.000Z', '2026-12-01T12:00:00.000Z'],
    ['ahead', '2026-12-01T12:04:50.000Z', '2026-12-01T12:00:00.000Z'],
  ])('%s', (_name, at: string, expected: string) => {
    expect(notAhead(new Date(at), now).toISOString()).toBe(expected);
  });
});
