import { ChannelType, OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import {
  channelPermissions,
  type ChannelLike,
  type GuildLike,
  type MemberLike,
  type OverwriteLike,
} from 'src/guilds/platform-permissions';
import type { SeedChannel, SeedGuild } from 'src/platform/emulator/emulator.seed';
import { permissionsIn, visibilityOf } from 'src/platform/emulator/emulator-visibility';
import vectors from 'test/vectors/permission-vectors.json';

/** The two flags the emulator reads: whether it agrees with the service on them is what matters. */
const READ = P.ViewChannel | P.ManageThreads;

interface PermissionVector {
  id: string;
  now: string;
  guild: GuildLike;
  channel: ChannelLike;
  parent_channel?: ChannelLike;
  member: MemberLike;
  expected: string;
}

function seedOf(guild: GuildLike, members: MemberLike[], channels: ChannelLike[]): SeedGuild {
  return {
    id: guild.id,
    name: 'g',
    icon: null,
    owner_id: guild.owner_id,
    roles: guild.roles.map((role) => ({ ...role, name: role.id })),
    channels: channels.map((channel) => channelOf(channel)),
    members: members.map((member) => ({
      user_id: member.user.id,
      roles: [...member.roles],
      joined_at: '2024-01-01T00:00:00.000Z',
      communication_disabled_until: member.communication_disabled_until ?? null,
    })),
  };
}

function channelOf(channel: ChannelLike): SeedChannel {
  return {
    id: channel.id,
    type: channel.type,
    name: channel.id,
    position: 0,
    parent_id: channel.parent_id ?? null,
    permission_overwrites: (channel.permission_overwrites ?? []).map((o) => ({ ...o })),
  };
}

/** The emulator's reading of the flags that decide visibility, after the implicit VIEW rule. */
function emulated(guild: SeedGuild, userId: string, overwrites: ChannelLike, now: number): bigint {
  const member = guild.members.find((m) => m.user_id === userId);
  const permissions = permissionsIn(guild, userId, member, channelOf(overwrites), now);
  return (permissions & P.ViewChannel) === 0n ? 0n : permissions & READ;
}

describe('the emulated platform: what a member can view', () => {
  describe.each((vectors.cases as PermissionVector[]).map((v) => [v.id, v] as const))(
    'vector %s',
    (_id, vector) => {
      it('agrees with the expected VIEW_CHANNEL and MANAGE_THREADS', () => {
        const seed = seedOf(vector.guild, [vector.member], [vector.channel]);
        const source = vector.parent_channel ?? vector.channel;
        const got = emulated(seed, vector.member.user.id, source, Date.parse(vector.now));
        expect(got).toBe(BigInt(vector.expected) & READ);
      });
    },
  );

  // Every combination of the inputs that decide the two flags, against the service's algorithm.
  const GUILD = '1100000000000000001';
  const USER = '1200000000000000002';
  const ROLE = '1300000000000000003';
  const OTHER_ROLE = '1300000000000000004';
  const NOW = Date.parse('2025-06-01T12:00:00.000Z');
  type Overwrite = 'none' | 'allow' | 'deny';
  interface Inputs {
    rank: 'member' | 'admin' | 'owner';
    everyoneViews: boolean;
    onEveryone: Overwrite;
    onRole: Overwrite;
    onOtherRole: Overwrite;
    onMember: Overwrite;
    timedOut: boolean;
  }
  const OVERWRITES: Overwrite[] = ['none', 'allow', 'deny'];
  const overwrite = (id: string, type: number, which: Overwrite): OverwriteLike[] =>
    which === 'none'
      ? []
      : [
          {
            id,
            type,
            allow: which === 'allow' ? READ.toString() : '0',
            deny: which === 'deny' ? READ.toString() : '0',
          },
        ];
  const combos: Inputs[] = [];
  for (const rank of ['member', 'admin', 'owner'] as const)
    for (const everyoneViews of [false, true])
      for (const onEveryone of OVERWRITES)
        for (const onRole of OVERWRITES)
          for (const onOtherRole of OVERWRITES)
            for (const onMember of OVERWRITES)
              for (const timedOut of [false, true])
                combos.push({
                  rank,
                  everyoneViews,
                  onEveryone,
                  onRole,
                  onOtherRole,
                  onMember,
                  timedOut,
                });

  it.each(combos.map((inputs) => [JSON.stringify(inputs), inputs] as const))(
    'agrees with the service on %s',
    (_label, inputs) => {
      const guild: GuildLike = {
        id: GUILD,
        owner_id: inputs.rank === 'owner' ? USER : '1200000000000000999',
        roles: [
          {
            id: GUILD,
            permissions: (inputs.everyoneViews ? P.ViewChannel : 0n).toString(),
            position: 0,
          },
          {
            id: ROLE,
            permissions: (
              P.ManageThreads | (inputs.rank === 'admin' ? P.Administrator : 0n)
            ).toString(),
            position: 1,
          },
          { id: OTHER_ROLE, permissions: '0', position: 2 },
        ],
      };
      const member: MemberLike = {
        user: { id: USER },
        roles: [ROLE, OTHER_ROLE],
        communication_disabled_until: inputs.timedOut ? '2099-01-01T00:00:00.000Z' : null,
      };
      const channel: ChannelLike = {
        id: '1400000000000000004',
        type: ChannelType.GuildText,
        permission_overwrites: [
          ...overwrite(GUILD, 0, inputs.onEveryone),
          ...overwrite(ROLE, 0, inputs.onRole),
          ...overwrite(OTHER_ROLE, 0, inputs.onOtherRole),
          ...overwrite(USER, 1, inputs.onMember),
        ],
      };
      const service = channelPermissions(guild, member, channel, { now: new Date(NOW) });
      const seed = seedOf(guild, [member], [channel]);
      expect(emulated(seed, USER, channel, NOW)).toBe(service.effective & READ);
    },
  );
});

describe('visibilityOf', () => {
  const GUILD = '1100000000000000001';
  const BOT = '1200000000000000001';
  const BOT_ROLE = '1300000000000000001';
  const HIDE = { id: GUILD, type: OverwriteType.Role, allow: '0', deny: P.ViewChannel.toString() };
  const LET_BOT_IN = {
    id: BOT,
    type: OverwriteType.Member,
    allow: P.ViewChannel.toString(),
    deny: '0',
  };
  const channel = (
    n: number,
    type: ChannelType,
    parent: number | null,
    overwrites: SeedChannel['permission_overwrites'] = [],
  ): SeedChannel => ({
    id: `14000000000000000${String(n).padStart(2, '0')}`,
    type,
    name: `c${n}`,
    position: n,
    parent_id: parent === null ? null : `14000000000000000${String(parent).padStart(2, '0')}`,
    permission_overwrites: overwrites,
  });
  const id = (n: number): string => `14000000000000000${String(n).padStart(2, '0')}`;

  function guildWith(
    channels: SeedChannel[],
    botPermissions: bigint = P.ViewChannel,
    extra: Partial<SeedGuild> = {},
  ): SeedGuild {
    return {
      id: GUILD,
      name: 'g',
      icon: null,
      owner_id: '1200000000000000999',
      roles: [
        { id: GUILD, name: '@everyone', permissions: '0', position: 0 },
        { id: BOT_ROLE, name: 'bot', permissions: botPermissions.toString(), position: 1 },
      ],
      channels,
      members: [{ user_id: BOT, roles: [BOT_ROLE], joined_at: '2024-01-01T00:00:00.000Z' }],
      ...extra,
    };
  }

  it.each<[string, SeedGuild, number[], number[]]>([
    [
      'a channel the bot can view, and one hidden from it',
      guildWith([
        channel(1, ChannelType.GuildText, null),
        channel(2, ChannelType.GuildText, null, [HIDE]),
      ]),
      [1],
      [],
    ],
    [
      'a hidden category with a channel the bot can view in it',
      guildWith([
        channel(1, ChannelType.GuildCategory, null, [HIDE]),
        channel(2, ChannelType.GuildText, 1, [HIDE, LET_BOT_IN]),
        channel(3, ChannelType.GuildText, 1, [HIDE]),
      ]),
      [1, 2],
      [],
    ],
    [
      'a hidden category whose channels are all hidden',
      guildWith([
        channel(1, ChannelType.GuildCategory, null, [HIDE]),
        channel(2, ChannelType.GuildText, 1, [HIDE]),
      ]),
      [],
      [],
    ],
    [
      'a category the bot can view, with a hidden channel in it',
      guildWith([
        channel(1, ChannelType.GuildCategory, null),
        channel(2, ChannelType.GuildText, 1, [HIDE]),
      ]),
      [1],
      [],
    ],
    [
      'threads under a channel the bot can view and under a hidden one',
      guildWith([
        channel(1, ChannelType.GuildText, null),
        channel(2, ChannelType.GuildText, null, [HIDE]),
        channel(3, ChannelType.PublicThread, 1),
        channel(4, ChannelType.PublicThread, 2),
        channel(5, ChannelType.AnnouncementThread, 1),
      ]),
      [1],
      [3, 5],
    ],
    [
      'a private thread, without MANAGE_THREADS in its parent',
      guildWith([
        channel(1, ChannelType.GuildText, null),
        channel(2, ChannelType.PrivateThread, 1),
      ]),
      [1],
      [],
    ],
    [
      'a private thread, with MANAGE_THREADS',
      guildWith(
        [channel(1, ChannelType.GuildText, null), channel(2, ChannelType.PrivateThread, 1)],
        P.ViewChannel | P.ManageThreads,
      ),
      [1],
      [2],
    ],
    [
      'everything, for the owner',
      guildWith(
        [channel(1, ChannelType.GuildText, null, [HIDE]), channel(2, ChannelType.PrivateThread, 1)],
        0n,
        { owner_id: BOT },
      ),
      [1],
      [2],
    ],
    [
      'nothing, for someone not in the guild',
      guildWith(
        [channel(1, ChannelType.GuildText, null), channel(2, ChannelType.PublicThread, 1)],
        P.ViewChannel,
        {
          members: [],
        },
      ),
      [],
      [],
    ],
  ])('%s', (_label, guild, channels, threads) => {
    const seen = visibilityOf(guild, BOT, Date.parse('2025-06-01T12:00:00.000Z'));
    expect([...seen.channels].sort()).toEqual(channels.map(id));
    expect([...seen.threads].sort()).toEqual(threads.map(id));
  });
});
