import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import {
  ALL_PERMISSIONS,
  basePermissions,
  channelPermissions,
  missingPermissions,
  permissionNames,
  type ChannelLike,
  type GuildLike,
  type MemberLike,
} from 'src/guilds/platform-permissions';
import vectors from 'test/vectors/permission-vectors.json';

interface PermissionVector {
  id: string;
  title: string;
  now: string;
  guild: GuildLike;
  channel: ChannelLike;
  parent_channel?: ChannelLike;
  member: MemberLike;
  expected_overwrites_only: string;
  expected: string;
}

const cases = (vectors.cases as PermissionVector[]).map((c) => [c.id, c] as const);

describe('channel permissions: the reference vectors', () => {
  it('covers every vector of the reference file', () => {
    expect(cases.length).toBe(17);
  });

  it('defines ALL as every known flag', () => {
    expect(ALL_PERMISSIONS.toString()).toBe(vectors.all_known_permissions);
  });

  it.each(cases)('%s: effective permissions', (_id, vector) => {
    const result = channelPermissions(vector.guild, vector.member, vector.channel, {
      parent: vector.parent_channel,
      now: new Date(vector.now),
    });
    expect(result.effective.toString()).toBe(vector.expected);
  });

  it.each(cases)('%s: permissions after overwrites only', (_id, vector) => {
    const result = channelPermissions(vector.guild, vector.member, vector.channel, {
      parent: vector.parent_channel,
      now: new Date(vector.now),
    });
    expect(result.overwritesOnly.toString()).toBe(vector.expected_overwrites_only);
  });
});

const GUILD_ID = '1100000000000000001';
const guild: GuildLike = {
  id: GUILD_ID,
  owner_id: '1200000000000000001',
  roles: [
    { id: GUILD_ID, permissions: (P.ViewChannel | P.SendMessages).toString(), position: 0 },
    { id: '1300000000000000001', permissions: P.KickMembers.toString(), position: 1 },
  ],
};
const member = (roles: string[], until?: string | null): MemberLike => ({
  user: { id: '1200000000000000009' },
  roles,
  communication_disabled_until: until,
});
const NOW = new Date('2025-06-01T12:00:00.000Z');

describe('channel permissions: rules beyond the vectors', () => {
  it('ignores role ids the guild does not know', () => {
    expect(basePermissions(guild, member(['999', '1300000000000000001']))).toBe(
      P.ViewChannel | P.SendMessages | P.KickMembers,
    );
  });

  it('keeps bits the platform has not defined yet', () => {
    const future = 1n << 60n;
    const g = { ...guild, roles: [{ id: GUILD_ID, permissions: String(future), position: 0 }] };
    expect(basePermissions(g, member([]))).toBe(future);
  });

  it('keys the implicit send rule on SEND_MESSAGES_IN_THREADS inside threads', () => {
    const parent: ChannelLike = {
      id: '1400000000000000001',
      type: 0,
      permission_overwrites: [
        {
          id: GUILD_ID,
          type: 0,
          allow: (P.EmbedLinks | P.AttachFiles).toString(),
          deny: '0',
        },
      ],
    };
    const thread: ChannelLike = { id: '1400000000000000002', type: 11, parent_id: parent.id };
    const inThread = channelPermissions(guild, member([]), thread, { parent, now: NOW });
    // SEND_MESSAGES is held but does not count in a thread; without SEND_MESSAGES_IN_THREADS the
    // extras go.
    expect(inThread.effective & (P.EmbedLinks | P.AttachFiles)).toBe(0n);
    const inParent = channelPermissions(guild, member([]), parent, { now: NOW });
    expect(inParent.effective & (P.EmbedLinks | P.AttachFiles)).toBe(P.EmbedLinks | P.AttachFiles);
  });

  it('does not apply the send rule to categories and forums', () => {
    const g = {
      ...guild,
      roles: [
        { id: GUILD_ID, permissions: (P.ViewChannel | P.EmbedLinks).toString(), position: 0 },
      ],
    };
    for (const type of [4, 15]) {
      const result = channelPermissions(g, member([]), { id: '1', type }, { now: NOW });
      expect(result.effective).toBe(P.ViewChannel | P.EmbedLinks);
    }
  });

  it('refuses to compute a thread without its parent', () => {
    expect(() =>
      channelPermissions(guild, member([]), { id: '2', type: 11, parent_id: '1' }, { now: NOW }),
    ).toThrow('needs its parent');
  });

  it('treats an unparseable timeout as no timeout', () => {
    const result = channelPermissions(
      guild,
      member([], 'not a date'),
      { id: '1', type: 0 },
      {
        now: NOW,
      },
    );
    expect(result.effective).toBe(P.ViewChannel | P.SendMessages);
  });

  it('names the missing flags, and administrators miss none', () => {
    expect(missingPermissions(P.ViewChannel, P.ViewChannel | P.SendMessages)).toBe(P.SendMessages);
    expect(missingPermissions(P.Administrator, P.ManageRoles)).toBe(0n);
    expect(permissionNames(P.ViewChannel | P.SendMessages | (1n << 60n))).toEqual([
      'ViewChannel',
      'SendMessages',
    ]);
  });
});
