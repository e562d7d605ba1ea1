import { type APIRole, ChannelType } from 'discord-api-types/v10';
import type { GuildChannel, GuildContext } from 'src/guilds/guild-context';
import { compareRoles } from 'src/guilds/role-hierarchy';

/**
 * A setting's own rule on the values of one of its channel or role columns, judged in the live
 * guild (a channel's type, a role's position): declared as `guildChecks` in the setting's
 * definition, run by the engine on every Create, Update and Reorder after the value is known to
 * name a channel or role of the guild. docs/settings-engine.md, "Rules that look at the guild".
 */
export type GuildColumnCheck = ChannelCheck | RoleCheck;

export interface ChannelCheck {
  readonly kind: 'channel';
  /** What is wrong with the channel, said to the user; null when it satisfies the rule. */
  problem(channel: GuildChannel, guild: GuildContext): string | null;
}

export interface RoleCheck {
  readonly kind: 'role';
  /** What is wrong with the role, said to the user; null when it satisfies the rule. */
  problem(role: APIRole, guild: GuildContext): string | null;
}

/** Channels the bot can post messages to and members read as a feed. */
const TEXT_CHANNEL_TYPES: ReadonlySet<ChannelType> = new Set([
  ChannelType.GuildText,
  ChannelType.GuildAnnouncement,
]);

/** How a user names each type of channel. */
const CHANNEL_TYPE_NAMES: Readonly<Partial<Record<ChannelType, string>>> = {
  [ChannelType.GuildText]: 'text channel',
  [ChannelType.GuildAnnouncement]: 'announcement channel',
  [ChannelType.GuildVoice]: 'voice channel',
  [ChannelType.GuildStageVoice]: 'stage channel',
  [ChannelType.GuildCategory]: 'category',
  [ChannelType.GuildForum]: 'forum channel',
  [ChannelType.GuildMedia]: 'media channel',
  [ChannelType.GuildDirectory]: 'directory channel',
  [ChannelType.PublicThread]: 'thread',
  [ChannelType.PrivateThread]: 'thread',
  [ChannelType.AnnouncementThread]: 'thread',
};

/** The channel is a text or announcement channel (not a voice channel, a category, a forum, a thread). */
export const textChannel: ChannelCheck = {
  kind: 'channel',
  problem: (channel) =>
    TEXT_CHANNEL_TYPES.has(channel.type)
      ? null
      : `${channel.id} is a ${CHANNEL_TYPE_NAMES[channel.type] ?? 'channel of another type'}; a text or announcement channel is needed`,
};

/** How a user names a role: its name and id. */
const roleName = (role: APIRole): string => `${role.name} (${role.id})`;

/**
 * The bot can give the role to members and take it away: not @everyone (every member holds it),
 * not managed by an integration (a bot's own role, the booster role), and below the bot's highest
 * role (Discord lets no one assign a role at or above their own highest). The bot's Manage Roles
 * permission is a guild-level need: declare it in `botNeeds.guild`.
 */
export const assignableRole: RoleCheck = {
  kind: 'role',
  problem: (role, guild) => {
    if (role.id === guild.guild.id) {
      return `${role.id} is @everyone, which every member holds; a role the bot can give is needed`;
    }
    if (role.managed) {
      return `${roleName(role)} is managed by an integration (a bot's role or the booster role), so the bot cannot give it; choose a role members can be given`;
    }
    if (guild.bot.userId === guild.guild.owner_id) return null;
    const top = guild.bot.highestRole;
    if (compareRoles(top, role) > 0) return null;
    return `${roleName(role)} is not below the bot's highest role, ${roleName(top)}; move the bot's role above it (Server Settings, Roles) or choose a lower role`;
  },
};
