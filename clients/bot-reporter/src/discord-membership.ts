// Keeps the Bot Management Service told which guilds a discord.js v14 bot is in, through the
// membership reporter. reportDiscordBot() (discord.ts) calls it; call it yourself before
// client.login() to wire the membership feed alone.
//
// It listens to the gateway's own dispatches (client.ws), not to discord.js's guild events and
// cache, because the feed needs what the gateway says at the moment it says it:
// - A shard's snapshot is READY's guild list, sent when READY arrives. discord.js's `shardReady`
//   comes up to `waitGuildTimeout` (15 s) later, and its guild cache is no snapshot: it never
//   drops a guild READY no longer lists, so after a shard re-identifies it still holds the guilds
//   the bot was removed from while the shard was away.
// - discord.js emits `guildCreate` for a join only once every shard of the process is ready: a
//   join that arrives while other shards are still starting goes silently into the cache.
// Each dispatch is read as it arrives, so every event is stamped when the bot saw it.

// discord.js is the bot's own (a peer dependency): only its types are imported here, so the
// package loads without it and uses the bot's copy through the client it is given.
import type {
  Client,
  CloseEvent,
  GatewayDispatchEvents,
  GatewayGuildCreateDispatchData,
  GatewayGuildDeleteDispatchData,
  GatewayReadyDispatchData,
} from 'discord.js';
import type { MembershipReporter } from './reporter.js';

/** The gateway's dispatch names, as `client.ws` emits them. */
export const DISPATCH = {
  ready: 'READY' as GatewayDispatchEvents.Ready,
  guildCreate: 'GUILD_CREATE' as GatewayDispatchEvents.GuildCreate,
  guildDelete: 'GUILD_DELETE' as GatewayDispatchEvents.GuildDelete,
  channelUpdate: 'CHANNEL_UPDATE' as GatewayDispatchEvents.ChannelUpdate,
  threadUpdate: 'THREAD_UPDATE' as GatewayDispatchEvents.ThreadUpdate,
};

/**
 * Sends each shard's snapshot at READY and its joins and leaves as they happen; heartbeats stop
 * while a shard is away. Snapshot failures go to `onSnapshotError` (the reporter's own
 * `onError` gets the background ones). Returns a function that removes the listeners.
 */
export function reportMembership(
  client: Client,
  reporter: MembershipReporter,
  onSnapshotError: (shardId: number, error: unknown) => void = (shardId, error) =>
    console.error(`membership snapshot of shard ${shardId} failed:`, error),
): () => void {
  // Each shard's guilds in its current session: READY's list, then its joins and leaves.
  const sessions = new Map<number, Set<string>>();

  const onReady = (data: GatewayReadyDispatchData, shardId: number): void => {
    const at = new Date();
    // Every guild the bot is in, available or not: an unavailable guild is one it is still in.
    const guilds = new Set(data.guilds.map((guild) => guild.id));
    sessions.set(shardId, guilds);
    // READY says how many shards the bot runs (all processes together); client.ws.shards holds
    // only this process's.
    const shardCount = data.shard?.[1] ?? client.options.shardCount ?? client.ws.shards.size;
    reporter
      .snapshot(shardId, shardCount, guilds, at)
      .catch((error: unknown) => onSnapshotError(shardId, error));
  };

  const onGuildCreate = (data: GatewayGuildCreateDispatchData, shardId: number): void => {
    const guilds = sessions.get(shardId);
    // A guild READY listed is loading, or back from an outage: only an id it did not list is a
    // join. (No session yet: attached after login, so there is no snapshot to add to either.)
    if (guilds === undefined || guilds.has(data.id)) return;
    guilds.add(data.id);
    reporter.joined(shardId, data.id);
  };

  const onGuildDelete = (data: GatewayGuildDeleteDispatchData, shardId: number): void => {
    // `unavailable` is an outage (discord.js's `guildUnavailable`, not `guildDelete`): the bot is
    // still in the guild. Without it, the bot was removed or the guild deleted.
    if (data.unavailable === true) return;
    sessions.get(shardId)?.delete(data.id);
    reporter.left(shardId, data.id);
  };

  // While a shard is away the service cannot hear of its joins and leaves; without heartbeats
  // it stops trusting the feed once the shard has been away longer than its limit (120 s).
  // A resumed session replays what was missed; a new one sends READY, so a new snapshot.
  const onReconnecting = (shardId: number): void => reporter.disconnected(shardId);
  const onDisconnect = (_event: CloseEvent, shardId: number): void =>
    reporter.disconnected(shardId);
  const onResume = (shardId: number): void => reporter.resumed(shardId);

  client.ws.on(DISPATCH.ready, onReady);
  client.ws.on(DISPATCH.guildCreate, onGuildCreate);
  client.ws.on(DISPATCH.guildDelete, onGuildDelete);
  client.on('shardReconnecting', onReconnecting);
  client.on('shardDisconnect', onDisconnect);
  client.on('shardResume', onResume);

  return () => {
    client.ws.off(DISPATCH.ready, onReady);
    client.ws.off(DISPATCH.guildCreate, onGuildCreate);
    client.ws.off(DISPATCH.guildDelete, onGuildDelete);
    client.off('shardReconnecting', onReconnecting);
    client.off('shardDisconnect', onDisconnect);
    client.off('shardResume', onResume);
  };
}
