import type {
  APIGuild,
  APIGuildChannel,
  APIGuildMember,
  APIThreadChannel,
  GuildChannelType,
} from 'discord-api-types/v10';
import { CHANNEL_FLAG_OBFUSCATED, type GuildState } from 'clients/bot-reporter/src/guild-state';

/** A guild from the feed in the platform's REST shapes, as per-guild routes read a guild. */
export interface FedGuild {
  guild: APIGuild;
  /** Channels as `GET /guilds/{id}/channels` lists them: none the bot cannot view. */
  channels: APIGuildChannel<GuildChannelType>[];
  /** Active threads, as `GET /guilds/{id}/threads/active` lists them. */
  threads: APIThreadChannel[];
  botMember: APIGuildMember;
}

/**
 * The fed state as the REST path would have read it (docs/guild-state.md, "Channels the bot
 * cannot view"): obfuscated channels and archived threads are left out, so both paths show the
 * same guild. Only the fields the permission algorithm and the guild info read are filled; the
 * casts say so.
 */
export function platformShapes(state: GuildState): FedGuild {
  const guild = {
    id: state.id,
    name: state.name,
    icon: state.icon,
    owner_id: state.owner_id,
    roles: state.roles.map((role) => ({
      id: role.id,
      name: role.name,
      permissions: role.permissions,
      position: role.position,
      managed: role.managed,
      color: 0,
      hoist: false,
      mentionable: false,
      icon: null,
      unicode_emoji: null,
      flags: 0,
    })),
  } as unknown as APIGuild;
  const channels = state.channels
    .filter((channel) => (channel.flags & CHANNEL_FLAG_OBFUSCATED) === 0)
    .map(
      (channel) =>
        ({
          id: channel.id,
          guild_id: state.id,
          type: channel.type,
          name: channel.name,
          position: channel.position,
          parent_id: channel.parent_id,
          flags: channel.flags,
          permission_overwrites: channel.permission_overwrites,
        }) as unknown as APIGuildChannel<GuildChannelType>,
    );
  const threads = state.threads
    .filter((thread) => !thread.archived)
    .map(
      (thread) =>
        ({
          id: thread.id,
          guild_id: state.id,
          type: thread.type,
          name: thread.name,
          parent_id: thread.parent_id,
          flags: thread.flags,
          thread_metadata: { archived: false, locked: false, auto_archive_duration: 1440 },
        }) as unknown as APIThreadChannel,
    );
  const botMember = {
    user: { id: state.bot_member.user_id },
    roles: state.bot_member.roles,
    communication_disabled_until: state.bot_member.communication_disabled_until,
    joined_at: null,
    deaf: false,
    mute: false,
    flags: 0,
  } as unknown as APIGuildMember;
  return { guild, channels, threads, botMember };
}
