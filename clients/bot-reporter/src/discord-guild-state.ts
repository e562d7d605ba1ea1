// Keeps the Bot Management Service told what a discord.js v14 bot sees in its guilds (roles,
// channels with their overwrites, active threads, the bot's own member), through the guild-state
// reporter. reportDiscordBot() (discord.ts) calls it; to wire it yourself, call reportGuildState()
// before client.login() and give the reporter `fullState: fullStateFrom(client)` so that it
// answers the service's resyncs from discord.js's cache.
//
// Unlike the membership wiring (membership.ts), it listens to discord.js's events, after
// discord.js has applied each dispatch to its cache, and describes what the cache then holds: the
// hash each report carries is of the bot's view, so the service can tell when it drifted from it.
// The Guilds intent brings every event it needs; the bot's own GUILD_MEMBER_UPDATE comes without
// the privileged members intent.

// Only discord.js's types: the package loads without it (discord-membership.ts says why).
import type {
  AnyThreadChannel,
  Client,
  ClientEvents,
  GatewayReadyDispatchData,
  Guild,
  GuildMember,
  NonThreadGuildBasedChannel,
  OverwriteType,
  Role,
} from 'discord.js';
import { DISPATCH } from './discord-membership.js';
import type {
  GuildState,
  GuildStateChannel,
  GuildStateFields,
  GuildStateMember,
  GuildStateRole,
  GuildStateThread,
} from './guild-state.js';
import type { GuildStateReporter } from './guild-state-reporter.js';

const ROLE_OVERWRITE = 0 as OverwriteType.Role;

export function roleState(role: Role): GuildStateRole {
  return {
    id: role.id,
    name: role.name,
    permissions: role.permissions.bitfield.toString(),
    // The platform's position, not discord.js's computed rank (`position`).
    position: role.rawPosition,
    managed: role.managed,
  };
}

/** A channel as the gateway sent it: one the bot cannot view keeps its `___hidden___` and flag. */
/**
 * The platform removes a deleted role's overwrites without a CHANNEL_UPDATE, and discord.js keeps
 * them in its cache: they are left out here, as the reporter's copy drops them (and they allow or
 * deny nothing to anyone).
 */
export function channelState(channel: NonThreadGuildBasedChannel): GuildStateChannel {
  const roles = channel.guild.roles.cache;
  return {
    id: channel.id,
    type: channel.type,
    name: channel.name,
    position: channel.rawPosition,
    parent_id: channel.parentId,
    flags: channel.flags.bitfield,
    permission_overwrites: channel.permissionOverwrites.cache
      .filter((overwrite) => overwrite.type !== ROLE_OVERWRITE || roles.has(overwrite.id))
      .map((overwrite) => ({
        id: overwrite.id,
        type: overwrite.type,
        allow: overwrite.allow.bitfield.toString(),
        deny: overwrite.deny.bitfield.toString(),
      })),
  };
}

/** Undefined for a thread without a parent, which the gateway never sends. */
export function threadState(thread: AnyThreadChannel): GuildStateThread | undefined {
  if (thread.parentId === null) return undefined;
  return {
    id: thread.id,
    type: thread.type,
    name: thread.name,
    parent_id: thread.parentId,
    flags: thread.flags.bitfield,
    archived: thread.archived === true,
  };
}

export function memberState(member: GuildMember): GuildStateMember {
  return {
    user_id: member.id,
    // discord.js lists @everyone among a member's roles; the platform does not.
    roles: member.roles.cache.filter((role) => role.id !== member.guild.id).map((role) => role.id),
    communication_disabled_until: member.communicationDisabledUntil?.toISOString() ?? null,
  };
}

export function guildFields(guild: Guild): GuildStateFields {
  return { name: guild.name, icon: guild.icon, owner_id: guild.ownerId };
}

/**
 * The guild's active threads, as GUILD_CREATE lists them. discord.js keeps a thread archived since
 * in its cache; the service lists only active ones, and a long-lived cache would hold more than a
 * guild's state may (MAX_STATE_THREADS).
 */
function threadsOf(guild: Guild): GuildStateThread[] {
  const threads: GuildStateThread[] = [];
  for (const channel of guild.channels.cache.values()) {
    const state = channel.isThread() ? threadState(channel) : undefined;
    if (state !== undefined && !state.archived) threads.push(state);
  }
  return threads;
}

/**
 * The guild as discord.js's cache holds it; undefined while it is unavailable or before the bot's
 * own member is cached (GUILD_CREATE always brings it).
 */
export function guildState(guild: Guild): GuildState | undefined {
  const me = guild.members.me;
  if (!guild.available || me === null) return undefined;
  const channels: GuildStateChannel[] = [];
  for (const channel of guild.channels.cache.values()) {
    if (!channel.isThread()) channels.push(channelState(channel));
  }
  return {
    id: guild.id,
    ...guildFields(guild),
    roles: guild.roles.cache.map(roleState),
    channels,
    threads: threadsOf(guild),
    bot_member: memberState(me),
  };
}

/** The reporter's `fullState`: a guild's state from the client's cache. */
export function fullStateFrom(client: Client): (guildId: string) => GuildState | undefined {
  return (guildId) => {
    const guild = client.guilds.cache.get(guildId);
    return guild === undefined ? undefined : guildState(guild);
  };
}

/**
 * Reports every change discord.js applies to its guilds' structure. Returns a function that
 * removes the listeners.
 */
export function reportGuildState(client: Client, reporter: GuildStateReporter): () => void {
  // Guilds given whole in this process: a join while another shard is still starting comes
  // into the cache without a `guildCreate` event, and is caught up when the shards are ready.
  const reported = new Set<string>();

  const whole = (guild: Guild): void => {
    const state = guildState(guild);
    if (state === undefined) return;
    reported.add(guild.id);
    reporter.guildCreate(guild.shardId, state);
  };
  const catchUp = (shardId?: number): void => {
    for (const guild of client.guilds.cache.values()) {
      if (reported.has(guild.id) || (shardId !== undefined && guild.shardId !== shardId)) continue;
      whole(guild);
    }
  };

  const upsertThread = (thread: AnyThreadChannel): void => {
    const state = threadState(thread);
    if (state !== undefined) reporter.threadUpsert(thread.guild.shardId, thread.guild.id, state);
  };

  const detach: (() => void)[] = [];
  const listen = <E extends keyof ClientEvents>(
    event: E,
    listener: (...args: ClientEvents[E]) => void,
  ): void => {
    client.on(event, listener);
    detach.push(() => client.off(event, listener));
  };

  // At start and after an outage (`guildAvailable`), and on a join (`guildCreate`).
  listen('guildAvailable', whole);
  listen('guildCreate', whole);
  listen('guildUpdate', (_old, guild) =>
    reporter.guildUpdate(guild.shardId, guild.id, guildFields(guild)),
  );
  // discord.js tells an outage (`guildUnavailable`) from a removal (`guildDelete`).
  listen('guildUnavailable', (guild) => reporter.guildDelete(guild.shardId, guild.id, true));
  listen('guildDelete', (guild) => {
    reported.delete(guild.id);
    reporter.guildDelete(guild.shardId, guild.id, false);
  });
  listen('roleCreate', (role) =>
    reporter.roleUpsert(role.guild.shardId, role.guild.id, roleState(role)),
  );
  listen('roleUpdate', (_old, role) =>
    reporter.roleUpsert(role.guild.shardId, role.guild.id, roleState(role)),
  );
  listen('roleDelete', (role) => reporter.roleDelete(role.guild.shardId, role.guild.id, role.id));
  listen('channelCreate', (channel) =>
    reporter.channelUpsert(channel.guild.shardId, channel.guild.id, channelState(channel)),
  );
  listen('channelUpdate', (_old, channel) => {
    if (channel.isDMBased()) return;
    reporter.channelUpsert(channel.guild.shardId, channel.guild.id, channelState(channel));
  });
  // discord.js drops the channel's threads from its cache too, as the service does.
  listen('channelDelete', (channel) => {
    if (channel.isDMBased()) return;
    reporter.channelDelete(channel.guild.shardId, channel.guild.id, channel.id);
  });
  listen('threadCreate', (thread) => upsertThread(thread));
  listen('threadUpdate', (_old, thread) => upsertThread(thread));
  listen('threadDelete', (thread) =>
    reporter.threadDelete(thread.guild.shardId, thread.guild.id, thread.id),
  );
  // discord.js replaced the synced channels' active threads; the event does not say which
  // channels those were, so every active thread the guild now holds goes, replacing the
  // service's (a thread archived since its last update goes too: it is not listed anyway).
  listen('threadListSync', (_threads, guild) =>
    reporter.threadListSync(guild.shardId, guild.id, threadsOf(guild)),
  );
  listen('guildMemberUpdate', (_old, member) => {
    if (member.id !== client.user?.id) return;
    reporter.botMemberUpdate(member.guild.shardId, member.guild.id, memberState(member));
  });
  listen('shardReady', (shardId) => catchUp(shardId));
  listen('clientReady', () => catchUp());
  listen('shardReconnecting', (shardId) => reporter.disconnected(shardId));
  listen('shardDisconnect', (_event, shardId) => reporter.disconnected(shardId));
  listen('shardResume', (shardId) => reporter.resumed(shardId));

  // A new session (READY, not a resume) did not replay what happened while the shard was away:
  // the service must not trust a guild's state until its GUILD_CREATE comes again. READY arrives
  // here before discord.js reads it, and each guild's GUILD_CREATE after it.
  const onReady = (data: GatewayReadyDispatchData, shardId: number): void => {
    reporter.resumed(shardId);
    for (const { id } of data.guilds) {
      if (reported.has(id)) reporter.guildDelete(shardId, id, true);
    }
  };

  // discord.js adds a channel or thread it did not hold on CHANNEL_UPDATE or THREAD_UPDATE (a
  // thread unarchived, say) without an event. The dispatch arrives here just before discord.js
  // applies it, so the cache is read once it has.
  const onUpdate = (data: { id: string }): void => {
    if (client.channels.cache.has(data.id)) return;
    queueMicrotask(() => {
      const channel = client.channels.cache.get(data.id);
      if (channel === undefined || channel.isDMBased()) return;
      if (channel.isThread()) upsertThread(channel);
      else reporter.channelUpsert(channel.guild.shardId, channel.guild.id, channelState(channel));
    });
  };

  client.ws.on(DISPATCH.ready, onReady);
  client.ws.on(DISPATCH.channelUpdate, onUpdate);
  client.ws.on(DISPATCH.threadUpdate, onUpdate);
  detach.push(() => {
    client.ws.off(DISPATCH.ready, onReady);
    client.ws.off(DISPATCH.channelUpdate, onUpdate);
    client.ws.off(DISPATCH.threadUpdate, onUpdate);
  });
  return () => {
    for (const remove of detach) remove();
  };
}
