import { ChannelType, OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import {
  CHANNEL_FLAG_OBFUSCATED,
  guildStateHash,
  type GuildState,
} from 'clients/bot-reporter/src/guild-state';
import { GuildStateCopy } from 'clients/bot-reporter/src/guild-state-copy';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { SeedChannel, SeedGuild, SeedRole } from 'src/platform/emulator/emulator.seed';
import {
  EmulatorState,
  type BotMembershipChange,
  type GuildStateChange,
} from 'src/platform/emulator/emulator.state';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const C = DEMO_IDS.community;
const BOT = DEMO_IDS.bot;
const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
const ROLE = { botRole: id(2), moderator: id(3), muted: id(11) };
const CHANNEL = {
  community: id(23),
  general: id(24),
  welcomeThread: id(26),
  staff: id(31),
  modLog: id(32),
  staffChat: id(33),
  noBots: id(34),
};
const VIEW = P.ViewChannel.toString();
const HIDE = { id: C, type: OverwriteType.Role, allow: '0', deny: VIEW };
const LET_BOT_IN = { id: BOT, type: OverwriteType.Member, allow: VIEW, deny: '0' };

interface World {
  state: EmulatorState;
  changes: GuildStateChange[];
  memberships: BotMembershipChange[];
}

function world(): World {
  const state = new EmulatorState(structuredClone(DEMO_SEED), () => NOW);
  const changes: GuildStateChange[] = [];
  const memberships: BotMembershipChange[] = [];
  state.onGuildState((change) => changes.push(change));
  state.onBotMembership((change) => memberships.push(change));
  return { state, changes, memberships };
}

/** A copy of one of the seed's channels or roles, to change and put back. */
function seedChannel(state: EmulatorState, channelId: string): SeedChannel {
  const found = state.guild(C)?.channels.find((channel) => channel.id === channelId);
  if (!found) throw new Error(`no channel ${channelId}`);
  return structuredClone(found);
}

function seedRole(state: EmulatorState, roleId: string): SeedRole {
  const found = state.guild(C)?.roles.find((role) => role.id === roleId);
  if (!found) throw new Error(`no role ${roleId}`);
  return structuredClone(found);
}

function withBits(role: SeedRole, add: bigint, remove = 0n): SeedRole {
  return { ...role, permissions: ((BigInt(role.permissions) | add) & ~remove).toString() };
}

const short = (snowflake: string): string => `#${snowflake.slice(-3)}`;

/** One line per change, to read a table of them at a glance. */
function summary(change: GuildStateChange): string {
  const guild = change.guild_id === C ? '' : ` in ${short(change.guild_id)}`;
  switch (change.type) {
    case 'guild_create':
    case 'guild_update':
      return `${change.type}${guild}`;
    case 'guild_delete':
      return `guild_delete${change.unavailable ? ' (outage)' : ''}${guild}`;
    case 'role_upsert':
      return `role_upsert ${short(change.role.id)}`;
    case 'role_delete':
      return `role_delete ${short(change.role_id)}`;
    case 'channel_upsert': {
      const form = change.channel.flags & CHANNEL_FLAG_OBFUSCATED ? 'obfuscated' : 'real';
      return `channel_upsert ${short(change.channel.id)} ${form}`;
    }
    case 'channel_delete':
      return `channel_delete ${short(change.channel_id)}`;
    case 'thread_upsert':
      return `thread_upsert ${short(change.thread.id)}${change.thread.archived ? ' archived' : ''}`;
    case 'thread_delete':
      return `thread_delete ${short(change.thread_id)}`;
    case 'thread_list_sync':
      return `thread_list_sync ${(change.channel_ids ?? []).map(short).join(',')} [${change.threads.map((t) => short(t.id)).join(',')}]`;
    case 'bot_member_update':
      return `bot_member_update ${change.member.roles.map(short).join(',')}`;
  }
}

/**
 * A mirror of a guild fed only by the announcements, folding them by the rules the bot's reporter
 * and the service share (GuildStateCopy, docs/guild-state.md): it must end up equal to
 * gatewayGuildState.
 */
function fold(held: GuildStateCopy | null, change: GuildStateChange): GuildStateCopy | null {
  if (change.type === 'guild_create') return new GuildStateCopy(change.guild);
  if (change.type === 'guild_delete') return null;
  if (!held) throw new Error(`${change.type} for a guild not held`);
  held.apply(change);
  return held;
}

function views(state: EmulatorState): Map<string, GuildState> {
  return new Map(state.botGuildIds().map((guildId) => [guildId, state.gatewayGuildState(guildId)]));
}

function newGuild(guildId: string, withBot: boolean): SeedGuild {
  return {
    id: guildId,
    name: 'New',
    icon: null,
    owner_id: DEMO_IDS.alice,
    roles: [{ id: guildId, name: '@everyone', permissions: VIEW, position: 0 }],
    channels: [
      { id: `${guildId.slice(0, -1)}9`, type: ChannelType.GuildText, name: 'x', position: 0 },
    ],
    members: withBot ? [{ user_id: BOT, roles: [], joined_at: '2024-01-01T00:00:00.000Z' }] : [],
  };
}

describe('EmulatorState: the guild as the bot gateway holds it', () => {
  it("holds the guild's fields, roles, every channel, the threads it can view and its own member", () => {
    const { state } = world();
    const view = state.gatewayGuildState(C);
    expect(view).toMatchObject({
      id: C,
      name: 'Demo Community',
      icon: 'a_9c1f0e3b2d4a5c6e7f8091a2b3c4d5e6',
      owner_id: DEMO_IDS.alice,
      bot_member: { user_id: BOT, roles: [ROLE.botRole], communication_disabled_until: null },
      threads: [
        {
          id: CHANNEL.welcomeThread,
          type: ChannelType.PublicThread,
          name: 'welcome-thread',
          parent_id: CHANNEL.general,
          flags: 0,
          archived: false,
        },
      ],
    });
    expect(view.roles).toHaveLength(13);
    expect(view.roles.find((role) => role.id === ROLE.botRole)).toEqual({
      id: ROLE.botRole,
      name: 'Demo Moderation Bot',
      permissions: seedRole(state, ROLE.botRole).permissions,
      position: 10,
      managed: true,
    });
    // Every channel but the thread; the two the bot cannot view obfuscated.
    expect(view.channels).toHaveLength(14);
    const obfuscated = view.channels.filter((c) => c.flags & CHANNEL_FLAG_OBFUSCATED);
    expect(obfuscated.map((c) => c.id).sort()).toEqual([CHANNEL.staffChat, CHANNEL.noBots]);
  });

  it('obfuscates a channel the bot cannot view as the platform does', () => {
    const { state } = world();
    const noBots = state.gatewayGuildState(C).channels.find((c) => c.id === CHANNEL.noBots);
    // id, type and position are all the platform keeps (discord-api-docs #8454).
    expect(noBots).toEqual({
      id: CHANNEL.noBots,
      type: ChannelType.GuildText,
      name: '___hidden___',
      position: 3,
      parent_id: null,
      flags: 1 << 17,
      permission_overwrites: [{ id: C, type: 0, allow: '0', deny: '1024' }],
    });
  });

  it('shows a hidden category with a channel the bot can view in it, with that channel', () => {
    const { state } = world();
    const { channels } = state.gatewayGuildState(C);
    expect(channels.find((c) => c.id === CHANNEL.staff)).toMatchObject({
      name: 'Staff',
      flags: 0,
    });
    expect(channels.find((c) => c.id === CHANNEL.modLog)).toMatchObject({
      name: 'mod-log',
      parent_id: CHANNEL.staff,
      flags: 0,
      permission_overwrites: expect.arrayContaining([
        { id: BOT, type: 1, allow: expect.any(String), deny: '0' },
      ]),
    });
  });

  it.each([
    ['a guild the bot is not in', DEMO_IDS.sandbox, `the bot is not in guild ${DEMO_IDS.sandbox}`],
    ['an unknown guild', '42', 'unknown guild 42'],
  ])('has no view of %s', (_label, guildId, message) => {
    expect(() => world().state.gatewayGuildState(guildId)).toThrow(message);
  });

  it('serves REST without the channels and threads the bot cannot view', () => {
    const { state } = world();
    const community = state.guild(C);
    if (!community) throw new Error('the seed has the community');
    const ids = state.channelObjects(community).map((c) => c.id);
    expect(ids).toHaveLength(12);
    expect(ids).not.toContain(CHANNEL.staffChat);
    expect(ids).not.toContain(CHANNEL.noBots);
    expect(ids).toContain(CHANNEL.staff);
    expect(state.threadObjects(community).map((t) => t.id)).toEqual([CHANNEL.welcomeThread]);
    state.upsertChannel(C, {
      ...seedChannel(state, CHANNEL.general),
      permission_overwrites: [HIDE],
    });
    expect(state.threadObjects(community)).toEqual([]);
  });

  it('keeps the same hash while nothing changes', () => {
    const { state } = world();
    const first = guildStateHash(state.gatewayGuildState(C));
    const community = state.guild(C);
    if (!community) throw new Error('the seed has the community');
    state.channelObjects(community);
    state.threadObjects(community);
    expect(guildStateHash(state.gatewayGuildState(C))).toBe(first);
    expect(guildStateHash(world().state.gatewayGuildState(C))).toBe(first);
  });
});

describe('EmulatorState: run-time changes, announced as the gateway would', () => {
  const LABELS = {
    botLeaves: 'the bot leaves',
  };
  /** What happens, what is announced, and whether the community's hash changes (null: bot gone). */
  const cases: [string, (state: EmulatorState) => void, string[], boolean | null][] = [
    ['renames the guild', (s) => s.updateGuild(C, { name: 'Renamed' }), ['guild_update'], true],
    [
      'makes the bot the owner: it sees every channel',
      (s) => s.updateGuild(C, { owner_id: BOT }),
      [
        'guild_update',
        'channel_upsert #134 real',
        'channel_upsert #133 real',
        'thread_list_sync #134,#133 []',
      ],
      true,
    ],
    [
      'creates a role',
      (s) => s.upsertRole(C, { id: id(40), name: 'New', permissions: '0', position: 1 }),
      ['role_upsert #140'],
      true,
    ],
    [
      "takes VIEW_CHANNEL from @everyone: the bot keeps its role's",
      (s) => s.upsertRole(C, withBits(seedRole(s, C), 0n, P.ViewChannel)),
      ['role_upsert #100'],
      true,
    ],
    [
      "makes the bot's role an administrator: every channel opens",
      (s) => s.upsertRole(C, withBits(seedRole(s, ROLE.botRole), P.Administrator)),
      [
        'role_upsert #102',
        'channel_upsert #134 real',
        'channel_upsert #133 real',
        'thread_list_sync #134,#133 []',
      ],
      true,
    ],
    [
      "deletes the bot's role: no-bots no longer hides from it",
      (s) => s.deleteRole(C, ROLE.botRole),
      ['role_delete #102', 'channel_upsert #134 real', 'thread_list_sync #134 []'],
      true,
    ],
    [
      'deletes a role the bot does not hold (its overwrites go silently)',
      (s) => s.deleteRole(C, ROLE.muted),
      ['role_delete #111'],
      true,
    ],
    [
      'gives the bot the moderator role: staff-chat opens',
      (s) => s.addMember(C, { ...botMember(s), roles: [ROLE.botRole, ROLE.moderator] }),
      ['bot_member_update #102,#103', 'channel_upsert #133 real', 'thread_list_sync #133 []'],
      true,
    ],
    [
      'times the bot out: it still views what it viewed',
      (s) =>
        s.addMember(C, {
          ...botMember(s),
          communication_disabled_until: '2099-01-01T00:00:00.000Z',
        }),
      ['bot_member_update #102'],
      true,
    ],
    [
      'lets the bot into staff-chat by an overwrite',
      (s) => {
        const staffChat = seedChannel(s, CHANNEL.staffChat);
        staffChat.permission_overwrites = [...(staffChat.permission_overwrites ?? []), LET_BOT_IN];
        s.upsertChannel(C, staffChat);
      },
      ['channel_upsert #133 real', 'thread_list_sync #133 []'],
      true,
    ],
    [
      'hides general from the bot: its thread goes unannounced',
      (s) =>
        s.upsertChannel(C, { ...seedChannel(s, CHANNEL.general), permission_overwrites: [HIDE] }),
      ['channel_upsert #124 obfuscated'],
      true,
    ],
    [
      'hides general, then opens it again: its thread is synced',
      (s) => {
        const general = seedChannel(s, CHANNEL.general);
        s.upsertChannel(C, { ...general, permission_overwrites: [HIDE] });
        s.upsertChannel(C, general);
      },
      [
        'channel_upsert #124 obfuscated',
        'channel_upsert #124 real',
        'thread_list_sync #124 [#126]',
      ],
      false,
    ],
    [
      'takes the bot out of mod-log: the Staff category hides with it',
      (s) => {
        const modLog = seedChannel(s, CHANNEL.modLog);
        modLog.permission_overwrites = modLog.permission_overwrites?.filter((o) => o.id !== BOT);
        s.upsertChannel(C, modLog);
      },
      ['channel_upsert #132 obfuscated', 'channel_upsert #131 obfuscated'],
      true,
    ],
    [
      'creates a channel hidden from the bot',
      (s) =>
        s.upsertChannel(C, {
          id: id(40),
          type: ChannelType.GuildText,
          name: 'secret',
          position: 9,
          permission_overwrites: [HIDE],
        }),
      ['channel_upsert #140 obfuscated'],
      true,
    ],
    [
      'opens a thread under general',
      (s) => s.upsertChannel(C, thread(id(41), CHANNEL.general)),
      ['thread_upsert #141'],
      true,
    ],
    [
      'opens a thread under staff-chat, which the bot cannot view',
      (s) => s.upsertChannel(C, thread(id(41), CHANNEL.staffChat)),
      [],
      false,
    ],
    [
      'archives welcome-thread',
      (s) => s.upsertChannel(C, { ...seedChannel(s, CHANNEL.welcomeThread), archived: true }),
      ['thread_upsert #126 archived'],
      true,
    ],
    [
      'opens a private thread, then gives the bot MANAGE_THREADS',
      (s) => {
        s.upsertChannel(C, { ...thread(id(42), CHANNEL.general), type: ChannelType.PrivateThread });
        s.upsertRole(C, withBits(seedRole(s, ROLE.botRole), P.ManageThreads));
      },
      ['role_upsert #102', 'thread_upsert #142'],
      true,
    ],
    [
      'deletes welcome-thread',
      (s) => s.deleteChannel(C, CHANNEL.welcomeThread),
      ['thread_delete #126'],
      true,
    ],
    [
      'deletes general, its thread with it',
      (s) => s.deleteChannel(C, CHANNEL.general),
      ['channel_delete #124', 'thread_delete #126'],
      true,
    ],
    [
      'deletes the Community category: its channels stay, out of any category',
      (s) => s.deleteChannel(C, CHANNEL.community),
      [
        'channel_delete #123',
        'channel_upsert #124 real',
        'channel_upsert #125 real',
        'channel_upsert #127 real',
        'channel_upsert #134 obfuscated',
      ],
      true,
    ],
    [
      'deletes a channel the bot cannot view',
      (s) => s.deleteChannel(C, CHANNEL.noBots),
      ['channel_delete #134'],
      true,
    ],
    [
      'lets a member join, another leave',
      (s) => {
        s.addMember(C, {
          user_id: DEMO_IDS.dave,
          roles: [],
          joined_at: '2025-01-01T00:00:00.000Z',
        });
        s.removeMember(C, DEMO_IDS.bob);
      },
      [],
      false,
    ],
    [LABELS.botLeaves, (s) => s.removeMember(C, BOT), ['guild_delete'], null],
    [
      'the bot leaves and comes back',
      (s) => {
        const member = botMember(s);
        s.removeMember(C, BOT);
        s.addMember(C, member);
      },
      ['guild_delete', 'guild_create'],
      false,
    ],
    [
      'changes a guild the bot is not in',
      (s) => {
        s.updateGuild(DEMO_IDS.sandbox, { name: 'x' });
        s.upsertRole(DEMO_IDS.sandbox, { id: id(99), name: 'r', permissions: '0', position: 2 });
        s.upsertChannel(DEMO_IDS.sandbox, thread(id(98), '1100000000000000210'));
        s.deleteChannel(DEMO_IDS.sandbox, '1100000000000000210');
      },
      [],
      false,
    ],
    [
      'the bot joins the sandbox',
      (s) => s.addMember(DEMO_IDS.sandbox, { user_id: BOT, roles: [], joined_at: NOW_ISO }),
      ['guild_create in #200'],
      false,
    ],
    [
      'a guild is created with the bot, another without',
      (s) => {
        s.addGuild(newGuild('1100000000000000400', true));
        s.addGuild(newGuild('1100000000000000500', false));
      },
      ['guild_create in #400'],
      false,
    ],
  ];

  describe.each(cases)('%s', (label, act, expected, hashChanges) => {
    it('announces it as the platform would', () => {
      const { state, changes } = world();
      act(state);
      expect(changes.map(summary)).toEqual(expected);
    });

    it('changes the hash of the gateway view when the bot can see the change', () => {
      const { state } = world();
      const before = guildStateHash(state.gatewayGuildState(C));
      act(state);
      if (hashChanges === null) {
        expect(() => state.gatewayGuildState(C)).toThrow();
        return;
      }
      const after = guildStateHash(state.gatewayGuildState(C));
      expect(after !== before).toBe(hashChanges);
      // And it holds still afterwards.
      expect(guildStateHash(state.gatewayGuildState(C))).toBe(after);
    });

    it('lets a mirror fed by the announcements match the view, hash for hash', () => {
      const { state, changes } = world();
      const mirror = new Map<string, GuildStateCopy | null>(
        [...views(state)].map(([guildId, view]) => [guildId, new GuildStateCopy(view)]),
      );
      act(state);
      for (const change of changes) {
        mirror.set(change.guild_id, fold(mirror.get(change.guild_id) ?? null, change));
      }
      const now = views(state);
      for (const [guildId, held] of mirror) {
        const view = now.get(guildId);
        expect(held && held.hash()).toBe(view ? guildStateHash(view) : null);
      }
      expect([...now.keys()].every((guildId) => mirror.has(guildId))).toBe(true);
      if (label === LABELS.botLeaves) expect(mirror.get(C)).toBeNull();
    });
  });

  it('announces the full view on a join, and each change with its guild', () => {
    const { state, changes } = world();
    const member = botMember(state);
    state.removeMember(C, BOT);
    state.addMember(C, member);
    state.updateGuild(C, { icon: null });
    expect(changes).toEqual([
      { guild_id: C, type: 'guild_delete', unavailable: false },
      { guild_id: C, type: 'guild_create', guild: world().state.gatewayGuildState(C) },
      {
        guild_id: C,
        type: 'guild_update',
        guild: { name: 'Demo Community', icon: null, owner_id: DEMO_IDS.alice },
      },
    ]);
  });

  it('announces a channel the bot gains in full, then its threads', () => {
    const { state, changes } = world();
    const general = seedChannel(state, CHANNEL.general);
    state.upsertChannel(C, { ...general, permission_overwrites: [HIDE] });
    state.upsertChannel(C, general);
    expect(changes.slice(1)).toEqual([
      {
        guild_id: C,
        type: 'channel_upsert',
        channel: {
          id: CHANNEL.general,
          type: ChannelType.GuildText,
          name: 'general',
          position: 0,
          parent_id: CHANNEL.community,
          flags: 0,
          permission_overwrites: general.permission_overwrites,
        },
      },
      {
        guild_id: C,
        type: 'thread_list_sync',
        channel_ids: [CHANNEL.general],
        threads: state.gatewayGuildState(C).threads,
      },
    ]);
  });

  it("keeps telling the bot's joins and leaves to onBotMembership", () => {
    const { state, memberships } = world();
    const member = botMember(state);
    state.removeMember(C, BOT);
    state.addMember(C, member);
    state.addMember(C, { ...member, roles: [] });
    state.addGuild(newGuild('1100000000000000400', true));
    expect(memberships).toEqual([
      { guildId: C, present: false },
      { guildId: C, present: true },
      { guildId: '1100000000000000400', present: true },
    ]);
  });

  it('stops calling a listener once it is stopped', () => {
    const { state } = world();
    const heard: GuildStateChange[] = [];
    const stop = state.onGuildState((change) => heard.push(change));
    state.updateGuild(C, { name: 'One' });
    stop();
    state.updateGuild(C, { name: 'Two' });
    expect(heard.map((change) => change.type)).toEqual(['guild_update']);
  });

  it.each([
    ['@everyone', () => (s: EmulatorState) => s.deleteRole(C, C), '@everyone cannot be deleted'],
    ['an unknown role', () => (s: EmulatorState) => s.deleteRole(C, '42'), 'unknown role 42'],
    [
      'an unknown channel',
      () => (s: EmulatorState) => s.deleteChannel(C, '42'),
      'unknown channel 42',
    ],
  ])('refuses to delete %s', (_label, make, message) => {
    expect(() => make()(world().state)).toThrow(message);
  });
});

const NOW_ISO = new Date(NOW).toISOString();

function botMember(state: EmulatorState): NonNullable<ReturnType<EmulatorState['member']>> {
  const community = state.guild(C);
  const member = community && state.member(community, BOT);
  if (!member) throw new Error('the seed has the bot in the community');
  return structuredClone(member);
}

function thread(threadId: string, parentId: string): SeedChannel {
  return {
    id: threadId,
    type: ChannelType.PublicThread,
    name: 'thread',
    position: 0,
    parent_id: parentId,
  };
}
