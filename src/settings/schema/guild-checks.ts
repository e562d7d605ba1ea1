import { type APIRole, ChannelType } from 'discord-api-types/v10';
import type { GuildChannel, GuildContext } from 'src/guilds/guild-context';

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
