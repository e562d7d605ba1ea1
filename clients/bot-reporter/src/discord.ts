// The package's discord.js integration (`@bot-management-service/bot-reporter/discord`): one call
// wires a discord.js v14 client to the three feeds the service takes from a bot, for every shard
// the client's process runs. A bot split over processes (a ShardingManager, clusters of shards)
// makes the call in each process, on that process's client: each reports its own shards, and
// nothing needs to pass between them.
//
// discord.js is a peer dependency: only its types are imported, so this file runs on the bot's
// own copy, through the client it is given.

import type { Client, ShardingManager } from 'discord.js';
import { fullStateFrom, reportGuildState } from './discord-guild-state.js';
import { reportMembership } from './discord-membership.js';
import {
  createGuildStateReporter,
  type GuildStateReporter,
  type GuildStateReporterOptions,
} from './guild-state-reporter.js';
import {
  createMembershipReporter,
  type MembershipReporter,
  type MembershipReporterOptions,
} from './reporter.js';
import {
  createShardStatsReporter,
  type ShardStats,
  type ShardStatsReporter,
  type ShardStatus,
} from './shard-stats-reporter.js';
import { errorReporter, type ReporterError, type RequestOptions } from './transport.js';

export {
  channelState,
  fullStateFrom,
  guildFields,
  guildState,
  memberState,
  reportGuildState,
  roleState,
  threadState,
} from './discord-guild-state.js';
export { reportMembership } from './discord-membership.js';

export type DiscordFeed = 'membership' | 'guild-state' | 'shard-stats';

export interface DiscordBotReporterOptions extends RequestOptions {
  /**
   * Every feed's background failures, with the feed's name. Default: one line on stderr each,
   * `[bot-reporter] <feed>: <message>`.
   */
  onError?: (error: ReporterError, feed: DiscordFeed) => void;
  /** How often each shard's stats are sent (and at once when a shard becomes ready). Default 30 s. */
  shardStatsIntervalMs?: number;
  /**
   * On these signals, the client is destroyed and every feed flushed before the signal's default
   * action (or your own listeners) goes on. `[]` leaves shutdown to you: call `close()` after
   * `client.destroy()`. Default SIGINT and SIGTERM.
   */
  closeOn?: readonly NodeJS.Signals[];
  /** Options passed to the membership reporter (its intervals and bounds). */
  membership?: Omit<MembershipReporterOptions, keyof RequestOptions | 'onError'>;
  /** Options passed to the guild-state reporter (its intervals and bounds). */
  guildState?: Omit<GuildStateReporterOptions, keyof RequestOptions | 'onError' | 'fullState'>;
}

export interface DiscordBotReporting {
  readonly membership: MembershipReporter;
  readonly guildState: GuildStateReporter;
  readonly shardStats: ShardStatsReporter;
  /**
   * Stops listening, flushes the membership and guild-state feeds and reports every shard
   * `Closed`; rejects with the first failure. Call it after `client.destroy()`, so that no event
   * arrives after the last flush (the `closeOn` signals do both).
   */
  close(): Promise<void>;
}

/** discord.js's shard statuses (its `Status` enum, by value) as the service names them. */
const STATUSES: readonly ShardStatus[] = [
  'Ready', // Ready
  'Connecting', // Connecting
  'Reconnecting', // Reconnecting
  'Idle', // Idle
  'Connected', // Nearly
  'Closed', // Disconnected
  'Connected', // WaitingForGuilds
  'Connecting', // Identifying
  'Reconnecting', // Resuming
];

/**
 * Reports every shard `client` runs to the service at `baseUrl`, with an API token of a
 * `ROOT_USERS` user: each shard's guilds (a snapshot at READY, then joins and leaves), what the
 * bot sees in them (guild state, with the service's resyncs answered from discord.js's cache) and
 * its health (status, latency, guilds, members, uptime). Call it before `client.login()`. The
 * client needs the `Guilds` intent, and no privileged one.
 */
export function reportDiscordBot(
  client: Client,
  options: DiscordBotReporterOptions,
): DiscordBotReporting {
  if (isShardingManager(client)) {
    throw new TypeError(
      "reportDiscordBot() takes the Client of a process that runs shards: with a ShardingManager, call it in the file the manager spawns, on that file's client (each process reports its own shards)",
    );
  }
  const { onError, shardStatsIntervalMs, closeOn, membership, guildState, ...request } = options;
  const errorsOf = (feed: DiscordFeed) => {
    const fallback = errorReporter(undefined);
    return (error: ReporterError): void => {
      if (onError === undefined) {
        fallback(Object.assign(error, { message: `${feed}: ${error.message}` }));
      } else onError(error, feed);
    };
  };

  const membershipReporter = createMembershipReporter({
    ...membership,
    ...request,
    onError: errorsOf('membership'),
  });
  const guildStateReporter = createGuildStateReporter({
    ...guildState,
    ...request,
    fullState: fullStateFrom(client),
    onError: errorsOf('guild-state'),
  });
  const uptime = shardUptimes(client);
  const shardStats = createShardStatsReporter({
    ...request,
    intervalMs: shardStatsIntervalMs,
    shards: () => discordShardStats(client, uptime),
    onError: errorsOf('shard-stats'),
  });

  const onShardError = errorsOf('shard-stats');
  const snapshotErrors = errorReporter(errorsOf('membership'));
  const reportNow = (): void => {
    shardStats.report().catch(onShardError);
  };
  client.on('shardReady', reportNow);
  client.on('shardResume', reportNow);
  const detach = [
    reportMembership(client, membershipReporter, (_shardId, error) => snapshotErrors(error)),
    reportGuildState(client, guildStateReporter),
    () => uptime.detach(),
    () => {
      client.off('shardReady', reportNow);
      client.off('shardResume', reportNow);
    },
  ];

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const remove of detach) remove();
      const results = await Promise.allSettled([
        membershipReporter.close(),
        guildStateReporter.close(),
        shardStats.close(),
      ]);
      for (const signal of signals) process.off(signal, onSignal);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    })();
    return closing;
  };

  const signals = closeOn ?? ['SIGINT', 'SIGTERM'];
  const onSignal = (signal: NodeJS.Signals): void => {
    void (async () => {
      await client.destroy();
      await close().catch((error: unknown) => console.error('[bot-reporter] last flush:', error));
      // Ours was the listener that kept the signal from ending the process: with no other, the
      // signal's default action (ending it) happens now, the reports sent.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    })();
  };
  for (const signal of signals) process.once(signal, onSignal);

  return {
    membership: membershipReporter,
    guildState: guildStateReporter,
    shardStats,
    close,
  };
}

interface ShardUptimes {
  /** When each shard's current connection became ready (ms). */
  readonly since: Map<number, number>;
  readonly startedMs: number;
  detach(): void;
}

/** Follows when each shard connected, for its `uptime`. */
function shardUptimes(client: Client): ShardUptimes {
  const since = new Map<number, number>();
  const up = (shardId: number): void => {
    since.set(shardId, Date.now());
  };
  const down = (shardId: number): void => {
    since.delete(shardId);
  };
  const onDisconnect = (_event: unknown, shardId: number): void => down(shardId);
  client.on('shardReady', up);
  client.on('shardResume', up);
  client.on('shardReconnecting', down);
  client.on('shardDisconnect', onDisconnect);
  return {
    since,
    startedMs: Date.now(),
    detach() {
      client.off('shardReady', up);
      client.off('shardResume', up);
      client.off('shardReconnecting', down);
      client.off('shardDisconnect', onDisconnect);
    },
  };
}

/** The stats of every shard this process runs, as discord.js holds them now. */
export function discordShardStats(
  client: Client,
  uptimes?: Pick<ShardUptimes, 'since' | 'startedMs'>,
): ({ id: number } & ShardStats)[] {
  const now = Date.now();
  const guilds = new Map<number, { guilds: number; users: number }>();
  for (const guild of client.guilds.cache.values()) {
    const counts = guilds.get(guild.shardId) ?? { guilds: 0, users: 0 };
    counts.guilds += 1;
    counts.users += guild.available ? guild.memberCount : 0;
    guilds.set(guild.shardId, counts);
  }
  const startedMs = uptimes?.startedMs ?? now - process.uptime() * 1000;
  return client.ws.shards.map((shard) => {
    const since = uptimes?.since.get(shard.id);
    return {
      id: shard.id,
      status: STATUSES[shard.status] ?? 'Connecting',
      real_latency: shard.ping >= 0 ? shard.ping : null,
      ...(guilds.get(shard.id) ?? { guilds: 0, users: 0 }),
      uptime: since === undefined ? 0 : (now - since) / 1000,
      total_uptime: (now - startedMs) / 1000,
    };
  });
}

function isShardingManager(value: unknown): value is ShardingManager {
  return (
    typeof value === 'object' &&
    value !== null &&
    'spawn' in value &&
    'broadcastEval' in value &&
    !('ws' in value)
  );
}
