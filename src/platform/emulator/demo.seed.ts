import { ChannelType, OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';

const bits = (...flags: bigint[]): string => flags.reduce((all, flag) => all | flag, 0n).toString();

/** Ids of the demo world, for the README, tests and the demo login. */
export const DEMO_IDS = {
  bot: DEMO_DEFAULTS.clientId,
  demoUser: '1100000000000000010',
  /** The default demo login: owns Demo Community, a root user in demo mode. */
  alice: DEMO_DEFAULTS.login,
  bob: '1100000000000000012',
  carol: '1100000000000000013',
  dave: '1100000000000000014',
  /** The bot is in it; owned by alice; the demo user is a moderator there. */
  community: DEMO_DEFAULTS.mainServer,
  /** Owned by the demo user; the bot is not in it. */
  sandbox: '1100000000000000200',
  /** The bot is in it; the demo user is not a member. */
  botLab: '1100000000000000300',
} as const;

const C = DEMO_IDS.community;
const role = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
const channel = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;

const ROLES = {
  everyone: C,
  administrator: role(1),
  botRole: role(2),
  moderator: role(3),
  helper: role(4),
  eventHost: role(5),
  booster: role(6),
  vip: role(7),
  verified: role(8),
  member: role(9),
  announcementsPing: role(10),
  muted: role(11),
  newcomer: role(12),
};

/** Roles of the demo community, for examples that work in the demo (a setting's samples). */
export const DEMO_ROLES: Readonly<Record<keyof typeof ROLES, string>> = ROLES;

/** Channels of the demo community that examples name. */
export const DEMO_CHANNELS = {
  rules: channel(21),
  general: channel(24),
  modLog: channel(32),
} as const;

/** What @everyone may do in the demo guilds: the platform's defaults for a new guild. */
export const EVERYONE_DEFAULT = bits(
  P.CreateInstantInvite,
  P.ChangeNickname,
  P.ViewChannel,
  P.SendMessages,
  P.EmbedLinks,
  P.AttachFiles,
  P.AddReactions,
  P.UseExternalEmojis,
  P.ReadMessageHistory,
  P.Connect,
  P.Speak,
  P.UseVAD,
  P.UseApplicationCommands,
  P.CreatePublicThreads,
  P.SendMessagesInThreads,
);

const MUTED_DENY = bits(P.SendMessages, P.AddReactions, P.SendMessagesInThreads, P.Speak);
const STAFF_ONLY = [
  { id: ROLES.everyone, type: OverwriteType.Role, allow: '0', deny: bits(P.ViewChannel) },
  { id: ROLES.moderator, type: OverwriteType.Role, allow: bits(P.ViewChannel), deny: '0' },
  { id: ROLES.helper, type: OverwriteType.Role, allow: bits(P.ViewChannel), deny: '0' },
];

/**
 * The demo world served in demo mode: a community guild with a dozen roles, categories, text, voice,
 * stage, announcement and forum channels, a thread and permission overwrites; a guild the bot is not
 * in; and one where the demo user is not a member.
 */
export const DEMO_SEED: EmulatorSeed = {
  application: {
    id: DEMO_DEFAULTS.clientId,
    secret: DEMO_DEFAULTS.clientSecret,
    bot_token: 'demo-bot-token',
  },
  // What a dashboard asks for: its users' own members are read with their own tokens
  // (docs/guild-state.md, "The user's own member").
  login_scopes: ['identify', 'guilds', 'guilds.members.read'],
  users: [
    {
      id: DEMO_IDS.bot,
      username: 'demo-moderation-bot',
      discriminator: '0',
      global_name: 'Demo Moderation Bot',
      avatar: null,
      bot: true,
    },
    {
      id: DEMO_IDS.demoUser,
      username: 'demo_user',
      discriminator: '0',
      global_name: 'Demo User',
      avatar: '5f0c8d1a2b3c4d5e6f708192a3b4c5d6',
    },
    {
      id: DEMO_IDS.alice,
      username: 'alice',
      discriminator: '0',
      global_name: 'Alice',
      avatar: null,
    },
    {
      id: DEMO_IDS.bob,
      username: 'bob',
      discriminator: '0',
      global_name: 'Bob',
      avatar: null,
    },
    {
      id: DEMO_IDS.carol,
      username: 'carol',
      discriminator: '0',
      global_name: 'Carol',
      avatar: null,
    },
    {
      id: DEMO_IDS.dave,
      username: 'dave',
      discriminator: '0',
      global_name: null,
      avatar: null,
    },
  ],
  guilds: [
    {
      id: C,
      name: 'Demo Community',
      icon: 'a_9c1f0e3b2d4a5c6e7f8091a2b3c4d5e6',
      owner_id: DEMO_IDS.alice,
      features: ['COMMUNITY', 'NEWS', 'ROLE_ICONS'],
      roles: [
        { id: ROLES.everyone, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
        {
          id: ROLES.administrator,
          name: 'Administrator',
          permissions: bits(P.Administrator),
          position: 11,
          hoist: true,
          color: 0xe74c3c,
        },
        {
          id: ROLES.botRole,
          name: 'Demo Moderation Bot',
          permissions: bits(
            P.ViewChannel,
            P.SendMessages,
            P.EmbedLinks,
            P.ReadMessageHistory,
            P.ManageChannels,
            P.ManageRoles,
            P.ManageMessages,
            P.KickMembers,
            P.BanMembers,
            P.ModerateMembers,
            P.ViewAuditLog,
          ),
          position: 10,
          managed: true,
          tags: { bot_id: DEMO_IDS.bot },
        },
        {
          id: ROLES.moderator,
          name: 'Moderator',
          permissions: bits(
            P.KickMembers,
            P.BanMembers,
            P.ModerateMembers,
            P.ManageMessages,
            P.ManageNicknames,
            P.ManageThreads,
            P.ViewAuditLog,
            P.MuteMembers,
            P.MoveMembers,
          ),
          position: 9,
          hoist: true,
          color: 0x3498db,
        },
        {
          id: ROLES.helper,
          name: 'Helper',
          permissions: bits(P.ManageMessages, P.ModerateMembers),
          position: 8,
          color: 0x2ecc71,
        },
        {
          id: ROLES.eventHost,
          name: 'Event Host',
          permissions: bits(P.ManageEvents, P.CreateEvents, P.MuteMembers),
          position: 7,
        },
        {
          id: ROLES.booster,
          name: 'Server Booster',
          permissions: '0',
          position: 6,
          managed: true,
          color: 0xf47fff,
          tags: { premium_subscriber: null },
        },
        { id: ROLES.vip, name: 'VIP', permissions: '0', position: 5, hoist: true },
        { id: ROLES.verified, name: 'Verified', permissions: '0', position: 4 },
        { id: ROLES.member, name: 'Member', permissions: '0', position: 3 },
        {
          id: ROLES.announcementsPing,
          name: 'Announcements Ping',
          permissions: '0',
          position: 2,
          mentionable: true,
        },
        { id: ROLES.muted, name: 'Muted', permissions: '0', position: 1 },
        // Same position as Muted: the older id (Muted) ranks higher.
        { id: ROLES.newcomer, name: 'Newcomer', permissions: '0', position: 1 },
      ],
      channels: [
        {
          id: channel(20),
          type: ChannelType.GuildCategory,
          name: 'Information',
          position: 0,
          permission_overwrites: [
            {
              id: ROLES.everyone,
              type: OverwriteType.Role,
              allow: '0',
              deny: bits(P.SendMessages),
            },
          ],
        },
        {
          id: channel(21),
          type: ChannelType.GuildText,
          name: 'rules',
          position: 0,
          parent_id: channel(20),
          topic: 'Read before posting',
          permission_overwrites: [
            {
              id: ROLES.everyone,
              type: OverwriteType.Role,
              allow: '0',
              deny: bits(P.SendMessages, P.AddReactions),
            },
            {
              id: ROLES.moderator,
              type: OverwriteType.Role,
              allow: bits(P.SendMessages),
              deny: '0',
            },
          ],
        },
        {
          id: channel(22),
          type: ChannelType.GuildAnnouncement,
          name: 'announcements',
          position: 1,
          parent_id: channel(20),
          permission_overwrites: [
            {
              id: ROLES.everyone,
              type: OverwriteType.Role,
              allow: '0',
              deny: bits(P.SendMessages),
            },
            {
              id: ROLES.eventHost,
              type: OverwriteType.Role,
              allow: bits(P.SendMessages, P.MentionEveryone),
              deny: '0',
            },
          ],
        },
        { id: channel(23), type: ChannelType.GuildCategory, name: 'Community', position: 1 },
        {
          id: channel(24),
          type: ChannelType.GuildText,
          name: 'general',
          position: 0,
          parent_id: channel(23),
          permission_overwrites: [
            { id: ROLES.muted, type: OverwriteType.Role, allow: '0', deny: MUTED_DENY },
          ],
        },
        {
          id: channel(25),
          type: ChannelType.GuildText,
          name: 'off-topic',
          position: 1,
          parent_id: channel(23),
          permission_overwrites: [
            { id: ROLES.muted, type: OverwriteType.Role, allow: '0', deny: MUTED_DENY },
            {
              id: ROLES.vip,
              type: OverwriteType.Role,
              allow: bits(P.EmbedLinks, P.AttachFiles),
              deny: '0',
            },
          ],
        },
        {
          id: channel(26),
          type: ChannelType.PublicThread,
          name: 'welcome-thread',
          position: 0,
          parent_id: channel(24),
        },
        {
          id: channel(27),
          type: ChannelType.GuildForum,
          name: 'help-forum',
          position: 2,
          parent_id: channel(23),
        },
        {
          id: channel(34),
          type: ChannelType.GuildText,
          name: 'no-bots',
          position: 3,
          parent_id: channel(23),
          nsfw: true,
          permission_overwrites: [
            { id: ROLES.botRole, type: OverwriteType.Role, allow: '0', deny: bits(P.ViewChannel) },
          ],
        },
        { id: channel(28), type: ChannelType.GuildCategory, name: 'Voice', position: 2 },
        {
          id: channel(29),
          type: ChannelType.GuildVoice,
          name: 'Lounge',
          position: 0,
          parent_id: channel(28),
          permission_overwrites: [
            { id: ROLES.muted, type: OverwriteType.Role, allow: '0', deny: bits(P.Speak) },
          ],
        },
        {
          id: channel(30),
          type: ChannelType.GuildStageVoice,
          name: 'Town Hall',
          position: 1,
          parent_id: channel(28),
          permission_overwrites: [
            {
              id: ROLES.eventHost,
              type: OverwriteType.Role,
              allow: bits(P.MuteMembers, P.MoveMembers),
              deny: '0',
            },
          ],
        },
        {
          id: channel(31),
          type: ChannelType.GuildCategory,
          name: 'Staff',
          position: 3,
          permission_overwrites: STAFF_ONLY,
        },
        {
          id: channel(32),
          type: ChannelType.GuildText,
          name: 'mod-log',
          position: 0,
          parent_id: channel(31),
          permission_overwrites: [
            ...STAFF_ONLY,
            {
              id: DEMO_IDS.bot,
              type: OverwriteType.Member,
              allow: bits(P.ViewChannel, P.SendMessages, P.EmbedLinks),
              deny: '0',
            },
          ],
        },
        {
          id: channel(33),
          type: ChannelType.GuildText,
          name: 'staff-chat',
          position: 1,
          parent_id: channel(31),
          permission_overwrites: [
            ...STAFF_ONLY,
            {
              id: DEMO_IDS.demoUser,
              type: OverwriteType.Member,
              allow: '0',
              deny: bits(P.SendMessages),
            },
          ],
        },
      ],
      members: [
        {
          user_id: DEMO_IDS.alice,
          roles: [ROLES.administrator],
          joined_at: '2023-01-01T12:00:00.000Z',
        },
        { user_id: DEMO_IDS.bot, roles: [ROLES.botRole], joined_at: '2023-01-02T12:00:00.000Z' },
        {
          user_id: DEMO_IDS.demoUser,
          roles: [ROLES.moderator, ROLES.verified, ROLES.member, ROLES.booster],
          nick: 'Demo Mod',
          joined_at: '2023-02-01T12:00:00.000Z',
        },
        {
          user_id: DEMO_IDS.bob,
          roles: [ROLES.member, ROLES.muted],
          joined_at: '2024-05-01T12:00:00.000Z',
          // Timed out until far in the future.
          communication_disabled_until: '2099-01-01T00:00:00.000Z',
        },
        {
          user_id: DEMO_IDS.carol,
          roles: [ROLES.helper, ROLES.member, ROLES.newcomer],
          joined_at: '2025-03-01T12:00:00.000Z',
        },
      ],
    },
    {
      id: DEMO_IDS.sandbox,
      name: 'Demo Sandbox',
      icon: null,
      owner_id: DEMO_IDS.demoUser,
      roles: [
        { id: DEMO_IDS.sandbox, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
        {
          id: '1100000000000000201',
          name: 'Admin',
          permissions: bits(P.Administrator),
          position: 1,
        },
      ],
      channels: [
        { id: '1100000000000000210', type: ChannelType.GuildText, name: 'sandbox', position: 0 },
      ],
      members: [
        { user_id: DEMO_IDS.demoUser, roles: [], joined_at: '2024-01-01T00:00:00.000Z' },
        {
          user_id: DEMO_IDS.dave,
          roles: ['1100000000000000201'],
          joined_at: '2024-01-02T00:00:00.000Z',
        },
      ],
    },
    {
      id: DEMO_IDS.botLab,
      name: 'Bot Lab',
      icon: '0123456789abcdef0123456789abcdef',
      owner_id: DEMO_IDS.carol,
      roles: [
        { id: DEMO_IDS.botLab, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
        {
          id: '1100000000000000301',
          name: 'Demo Moderation Bot',
          permissions: bits(P.ViewChannel, P.SendMessages, P.ManageRoles, P.ManageChannels),
          position: 1,
          managed: true,
          tags: { bot_id: DEMO_IDS.bot },
        },
      ],
      channels: [
        {
          id: '1100000000000000310',
          type: ChannelType.GuildText,
          name: 'bot-testing',
          position: 0,
        },
      ],
      members: [
        { user_id: DEMO_IDS.carol, roles: [], joined_at: '2024-06-01T00:00:00.000Z' },
        {
          user_id: DEMO_IDS.bot,
          roles: ['1100000000000000301'],
          joined_at: '2024-06-02T00:00:00.000Z',
        },
      ],
    },
  ],
};
