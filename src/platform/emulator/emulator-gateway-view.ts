import { ChannelType, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import {
  CHANNEL_FLAG_OBFUSCATED,
  type GuildState,
  type GuildStateChannel,
  type GuildStateFields,
  type GuildStateMember,
  type GuildStateReport,
  type GuildStateRole,
  type GuildStateThread,
} from 'clients/bot-reporter/src/guild-state';
import type {
  SeedChannel,
  SeedGuild,
  SeedMember,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';
import { isThreadType, type Visibility } from 'src/platform/emulator/emulator-visibility';

/*
 * What a bot's gateway connection holds of a guild (docs/guild-state.md, discord-domain.md §8), built
 * from the emulator's seed, and the announcements that follow from a change to it. Pure functions.
 */

type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * One change to a guild as the bot's gateway tells it: a guild-state report without the fields its
 * stream adds (`seq`, `at`, `hash`).
 */
export type GuildStateChange = Without<GuildStateReport, 'seq' | 'at' | 'hash'>;
/** A change before it is addressed to its guild. */
export type GuildStateEvent = Without<GuildStateChange, 'guild_id'>;

/** The name the platform gives a channel the bot cannot view. */
export const OBFUSCATED_NAME = '___hidden___';
/** Channel types that hold threads: when the bot gains one, the gateway syncs its threads. */
const THREAD_PARENT_TYPES: ReadonlySet<number> = new Set([
  ChannelType.GuildText,
  ChannelType.GuildAnnouncement,
  ChannelType.GuildForum,
  ChannelType.GuildMedia,
]);

/**
 * The guild as the bot's `GUILD_CREATE` holds it: every channel (those the bot cannot view
 * obfuscated), the active threads it can view, its own member. `visibility` is the bot's.
 */
export function gatewayState(
  guild: SeedGuild,
  botMember: SeedMember,
  visibility: Visibility,
): GuildState {
  return {
    id: guild.id,
    ...stateFields(guild),
    roles: guild.roles.map(stateRole),
    channels: guild.channels
      .filter((channel) => !isThreadType(channel.type))
      .map((channel) => stateChannel(guild.id, channel, visibility.channels.has(channel.id))),
    threads: guild.channels
      .filter((channel) => visibility.threads.has(channel.id) && !channel.archived)
      .map(stateThread),
    bot_member: stateMember(botMember),
  };
}

export function stateFields(guild: SeedGuild): GuildStateFields {
  return { name: guild.name, icon: guild.icon, owner_id: guild.owner_id };
}

export function stateRole(role: SeedRole): GuildStateRole {
  return {
    id: role.id,
    name: role.name,
    permissions: role.permissions,
    position: role.position,
    managed: role.managed ?? false,
  };
}

/**
 * A channel as the gateway sends it. One the bot cannot view arrives obfuscated (change log
 * "Channel Obfuscation for Users and Bots", discord-api-docs #8454): the docs promise that only
 * `id`, `type` and `position` keep their real values ("other fields should not be relied on"),
 * and a library author's request in that PR to keep `parent_id` shows it is withheld, so it is
 * null here too; the name is `___hidden___`, the flags only CHANNEL_OBFUSCATED, and the overwrites
 * a single one denying VIEW_CHANNEL to @everyone.
 */
export function stateChannel(
  guildId: string,
  channel: SeedChannel,
  viewable: boolean,
): GuildStateChannel {
  if (!viewable) {
    return {
      id: channel.id,
      type: channel.type,
      name: OBFUSCATED_NAME,
      position: channel.position,
      parent_id: null,
      flags: CHANNEL_FLAG_OBFUSCATED,
      permission_overwrites: [
        {
          id: guildId,
          type: OverwriteType.Role,
          allow: '0',
          deny: PermissionFlagsBits.ViewChannel.toString(),
        },
      ],
    };
  }
  return {
    id: channel.id,
    type: channel.type,
    name: channel.name,
    position: channel.position,
    parent_id: channel.parent_id ?? null,
    flags: 0,
    permission_overwrites: (channel.permission_overwrites ?? []).map((o) => ({
      id: o.id,
      type: o.type === OverwriteType.Member ? 1 : 0,
      allow: o.allow,
      deny: o.deny,
    })),
  };
}

export function isObfuscated(channel: GuildStateChannel): boolean {
  return (channel.flags & CHANNEL_FLAG_OBFUSCATED) !== 0;
}

export function stateThread(thread: SeedChannel): GuildStateThread {
  return {
    id: thread.id,
    type: thread.type,
    name: thread.name,
    parent_id: thread.parent_id ?? '',
    flags: 0,
    archived: thread.archived ?? false,
  };
}

export function stateMember(member: SeedMember): GuildStateMember {
  return {
    user_id: member.user_id,
    roles: [...member.roles],
    communication_disabled_until: member.communication_disabled_until ?? null,
  };
}

/**
 * What the gateway announces besides a change's own events (`primary`) when the change altered what
 * the bot can view, from the guild before and after it:
 * - `channel_upsert` for each channel that turned obfuscated or real (not announced already): the
 *   platform dispatches CHANNEL_UPDATE with the full channel on gaining access, and the obfuscated
 *   form on losing it;
 * - `thread_list_sync` of the channels that turned viewable and hold threads, with their active
 *   threads (threads.mdx, "Gaining Access to Channels");
 * - `thread_upsert` for another thread that turned viewable (a private one, by MANAGE_THREADS).
 * Nothing is announced for threads lost with their channel: the platform sends no THREAD_DELETE
 * then (threads.mdx, "Losing Access to Channels"), so whoever mirrors the guild drops them itself.
 */
export function consequences(
  before: GuildState,
  after: GuildState,
  primary: readonly GuildStateEvent[],
): GuildStateEvent[] {
  const announcedChannels = new Set<string>();
  const announcedThreads = new Set<string>();
  for (const event of primary) {
    if (event.type === 'channel_upsert') announcedChannels.add(event.channel.id);
    if (event.type === 'channel_delete') announcedChannels.add(event.channel_id);
    if (event.type === 'thread_upsert') announcedThreads.add(event.thread.id);
    if (event.type === 'thread_delete') announcedThreads.add(event.thread_id);
  }
  const previous = new Map(before.channels.map((channel) => [channel.id, channel]));
  const events: GuildStateEvent[] = [];
  const opened = new Set<string>();
  for (const channel of after.channels) {
    const was = previous.get(channel.id);
    if (!was || isObfuscated(was) === isObfuscated(channel)) continue;
    if (!isObfuscated(channel) && THREAD_PARENT_TYPES.has(channel.type)) opened.add(channel.id);
    if (!announcedChannels.has(channel.id)) events.push({ type: 'channel_upsert', channel });
  }
  if (opened.size > 0) {
    events.push({
      type: 'thread_list_sync',
      channel_ids: [...opened],
      threads: after.threads.filter((thread) => opened.has(thread.parent_id)),
    });
  }
  const held = new Set(before.threads.map((thread) => thread.id));
  for (const thread of after.threads) {
    if (held.has(thread.id) || opened.has(thread.parent_id) || announcedThreads.has(thread.id)) {
      continue;
    }
    events.push({ type: 'thread_upsert', thread });
  }
  return events;
}
