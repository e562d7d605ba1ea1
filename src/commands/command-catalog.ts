import {
  ApplicationCommandOptionType as Option,
  ApplicationCommandType,
  ApplicationIntegrationType,
  ChannelType,
  InteractionContextType,
  PermissionFlagsBits as P,
  type APIApplicationCommandBasicOption,
  type ApplicationCommandOptionAllowedChannelType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';

/**
 * The bot's built-in commands, as the platform receives them. Checked against the platform's rules
 * at boot (`catalog-rules.ts`); `GET /bot-state` serves it and `npm run cli -- commands:sync`
 * installs it. The names here are what the `commands` setting accepts.
 */

const GUILD_ONLY = {
  integration_types: [ApplicationIntegrationType.GuildInstall],
  contexts: [InteractionContextType.Guild],
};
const EVERYWHERE = {
  integration_types: [ApplicationIntegrationType.GuildInstall],
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
};
const bits = (...flags: bigint[]): string => flags.reduce((all, flag) => all | flag, 0n).toString();

const TEXT_CHANNELS: ApplicationCommandOptionAllowedChannelType[] = [
  ChannelType.GuildText,
  ChannelType.GuildAnnouncement,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
  ChannelType.AnnouncementThread,
  ChannelType.GuildVoice,
  ChannelType.GuildStageVoice,
];

const target = (description: string, required = true): APIApplicationCommandBasicOption => ({
  type: Option.User,
  name: 'user',
  name_localizations: { de: 'nutzer', fr: 'membre', 'es-ES': 'usuario' },
  description,
  required,
});

const reason: APIApplicationCommandBasicOption = {
  type: Option.String,
  name: 'reason',
  name_localizations: { de: 'grund', fr: 'raison', 'es-ES': 'motivo' },
  description: 'Why; shown in the audit log and to the member',
  description_localizations: {
    de: 'Warum; erscheint im Audit-Log und beim Mitglied',
    fr: "Pourquoi ; visible dans le journal d'audit et par le membre",
  },
  max_length: 512,
};

const channelOption = (description: string): APIApplicationCommandBasicOption => ({
  type: Option.Channel,
  name: 'channel',
  description,
  channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildForum],
});

export const COMMAND_CATALOG: readonly RESTPostAPIApplicationCommandsJSONBody[] = [
  {
    name: 'ban',
    name_localizations: { de: 'bannen', fr: 'bannir', 'es-ES': 'banear' },
    description: 'Ban a member from the server',
    description_localizations: {
      de: 'Ein Mitglied vom Server bannen',
      fr: 'Bannir un membre du serveur',
      'es-ES': 'Expulsar permanentemente a un miembro del servidor',
    },
    default_member_permissions: bits(P.BanMembers),
    ...GUILD_ONLY,
    options: [
      target('The member to ban'),
      reason,
      {
        type: Option.Integer,
        name: 'delete-messages',
        description: 'Delete their messages of the last days',
        choices: [
          { name: 'None', value: 0 },
          { name: 'Last 24 hours', value: 1 },
          { name: 'Last 3 days', value: 3 },
          { name: 'Last 7 days', value: 7 },
        ],
      },
    ],
  },
  {
    name: 'unban',
    description: 'Lift a ban',
    default_member_permissions: bits(P.BanMembers),
    ...GUILD_ONLY,
    options: [
      {
        type: Option.String,
        name: 'user-id',
        description: 'The id of the banned user',
        required: true,
        min_length: 1,
        max_length: 20,
      },
      reason,
    ],
  },
  {
    name: 'kick',
    name_localizations: { de: 'kicken', fr: 'expulser' },
    description: 'Remove a member from the server; they can join again',
    default_member_permissions: bits(P.KickMembers),
    ...GUILD_ONLY,
    options: [target('The member to kick'), reason],
  },
  {
    name: 'timeout',
    description: 'Stop a member from talking for a while',
    default_member_permissions: bits(P.ModerateMembers),
    ...GUILD_ONLY,
    options: [
      target('The member to time out'),
      {
        type: Option.Integer,
        name: 'minutes',
        description: 'How long, in minutes (at most 28 days)',
        required: true,
        min_value: 1,
        max_value: 40_320,
      },
      reason,
    ],
  },
  {
    name: 'warn',
    description: 'Warn a member; warnings add up to automatic actions',
    default_member_permissions: bits(P.ModerateMembers),
    ...GUILD_ONLY,
    options: [target('The member to warn'), { ...reason, required: true }],
  },
  {
    name: 'purge',
    description: 'Delete recent messages in this channel',
    default_member_permissions: bits(P.ManageMessages),
    ...GUILD_ONLY,
    options: [
      {
        type: Option.Integer,
        name: 'count',
        description: 'How many messages to look at',
        required: true,
        min_value: 1,
        max_value: 100,
      },
      target('Only messages of this member', false),
      {
        type: Option.Channel,
        name: 'channel',
        description: 'Where (this channel by default)',
        channel_types: TEXT_CHANNELS,
      },
    ],
  },
  {
    name: 'lockdown',
    description: 'Stop members from sending messages until the lockdown ends',
    default_member_permissions: bits(P.ManageChannels, P.ManageRoles),
    ...GUILD_ONLY,
    options: [
      {
        type: Option.SubcommandGroup,
        name: 'server',
        description: 'Lock the whole server',
        options: [
          {
            type: Option.Subcommand,
            name: 'start',
            description: 'Lock every channel',
            options: [reason],
          },
          { type: Option.Subcommand, name: 'end', description: 'End the server lockdown' },
        ],
      },
      {
        type: Option.SubcommandGroup,
        name: 'channel',
        description: 'Lock one channel',
        options: [
          {
            type: Option.Subcommand,
            name: 'start',
            description: 'Lock a channel',
            options: [channelOption('The channel to lock (this one by default)'), reason],
          },
          {
            type: Option.Subcommand,
            name: 'end',
            description: "End a channel's lockdown",
            options: [channelOption('The channel to unlock (this one by default)')],
          },
        ],
      },
    ],
  },
  {
    name: 'settings',
    description: "Open or summarise the bot's settings for this server",
    default_member_permissions: bits(P.ManageGuild),
    ...GUILD_ONLY,
    options: [
      {
        type: Option.Subcommand,
        name: 'view',
        description: 'Show one setting',
        options: [
          {
            type: Option.String,
            name: 'setting',
            description: 'Which setting',
            required: true,
            choices: [
              { name: 'Role permissions', value: 'guildroles' },
              { name: 'Member permissions', value: 'guildmembers' },
              { name: 'Audit log sinks', value: 'auditlog_sinks' },
              { name: 'Lockdown', value: 'lockdown_settings' },
              { name: 'Protection', value: 'protection' },
              { name: 'Commands', value: 'commands' },
            ],
          },
        ],
      },
      { type: Option.Subcommand, name: 'dashboard', description: 'Link to the web dashboard' },
    ],
  },
  {
    name: 'stats',
    description: "The bot's shards, latency and reach",
    ...EVERYWHERE,
  },
  {
    name: 'help',
    name_localizations: { de: 'hilfe', fr: 'aide', 'es-ES': 'ayuda' },
    description: 'What the bot can do',
    ...EVERYWHERE,
    options: [
      {
        type: Option.String,
        name: 'command',
        description: 'Help for one command',
        autocomplete: true,
        max_length: 32,
      },
    ],
  },
  {
    name: 'whois',
    description: 'Who a member is: account age, roles, join date',
    ...GUILD_ONLY,
    options: [target('The member (yourself by default)', false)],
  },
  {
    name: 'serverinfo',
    description: 'About this server',
    ...GUILD_ONLY,
  },
  {
    name: 'remindme',
    description: 'Reminders sent to you later',
    ...EVERYWHERE,
    options: [
      {
        type: Option.Subcommand,
        name: 'add',
        description: 'Set a reminder',
        options: [
          {
            type: Option.String,
            name: 'in',
            description: 'When, from now: 10m, 2h, 3d',
            required: true,
            max_length: 16,
          },
          {
            type: Option.String,
            name: 'about',
            description: 'What to remind you of',
            required: true,
            max_length: 1000,
          },
        ],
      },
      { type: Option.Subcommand, name: 'list', description: 'Your reminders' },
      {
        type: Option.Subcommand,
        name: 'delete',
        description: 'Delete a reminder',
        options: [
          {
            type: Option.Integer,
            name: 'id',
            description: 'The reminder, as listed',
            required: true,
            min_value: 1,
          },
        ],
      },
    ],
  },
  {
    type: ApplicationCommandType.User,
    name: 'Whois',
    ...GUILD_ONLY,
  },
  {
    type: ApplicationCommandType.Message,
    name: 'Report message',
    ...GUILD_ONLY,
  },
];

/** The names of the catalog's commands: what per-guild command configuration may refer to. */
export const COMMAND_NAMES: readonly string[] = COMMAND_CATALOG.map((command) => command.name);
