// A fake bot: plays a Discord bot against a Bot Management Service, through the same reporters a
// real bot uses, so a developer sees the feeds go live, a change arrive and a drift heal before
// touching Discord (docs/bot-developers.md). Its guilds are made up, or read once from a
// platform's REST API (the demo's emulator, or Discord with a bot token); after that it is its own
// gateway: the changes it makes exist only in what it reports.

import { shardOfGuild } from './contract.js';
import type { GuildState, GuildStateChannel, GuildStateReceipt } from './guild-state.js';
import { createGuildStateReporter, type GuildStateReporter } from './guild-state-reporter.js';
import { createMembershipReporter, type MembershipReporter } from './reporter.js';
import { createShardStatsReporter, type ShardStatsReporter } from './shard-stats-reporter.js';
import { isRecord, type FetchLike, type ReporterError } from './transport.js';

export interface FakeBotOptions {
  /** The service, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An API token (`ara_…`) of a `ROOT_USERS` user. */
  token: string;
  /**
   * Where its guilds come from: `{guilds: n}` makes up n guilds; `{platformUrl, botToken}` reads the
   * bot's guilds from a platform's REST API once (the demo's emulator: the URL its log line names,
   * token `demo-bot-token`).
   */
  world: { guilds: number } | { platformUrl: string; botToken: string };
  /** How many shards the bot runs, all played by this process. Default 1. */
  shardCount?: number;
  /** Between two changes. Default 15 s. */
  changeEveryMs?: number;
  /** Every nth change is mangled on its way, so the service's copy drifts and heals. Default 3. */
  driftEvery?: number;
  /** Where it says what happens. Default: stdout. */
  log?: (line: string) => void;
  fetch?: FetchLike;
}

export interface FakeBot {
  readonly guilds: readonly GuildState[];
  /** Makes the next change now (a role created, or a channel renamed, in turn across guilds). */
  change(): Promise<void>;
  /** Reports the shards closed and flushes. */
  stop(): Promise<void>;
}

/** The bot's user in made-up worlds: the demo's bot. */
const FAKE_BOT_ID = '1100000000000000001';

/** Starts the fake bot: its shards' stats, snapshots and every guild whole, then a change each interval. */
export async function startFakeBot(options: FakeBotOptions): Promise<FakeBot> {
  const log = options.log ?? ((line: string) => console.log(line));
  const say = (line: string): void => log(`${new Date().toISOString().slice(11, 19)} ${line}`);
  const shardCount = options.shardCount ?? 1;
  const baseFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const world = await loadWorld(options.world, baseFetch);
  const guilds = new Map(world.guilds.map((guild) => [guild.id, guild]));
  const shardOf = (guildId: string): number => shardOfGuild(guildId, shardCount);
  const startedMs = Date.now();

  /** Set while the next guild-state batch is to be mangled on its way (a drift to heal). */
  let mangle: ((report: Record<string, unknown>) => boolean) | undefined;
  const drifted = new Set<string>();
  const watching: FetchLike = async (url, init) => {
    const path = new URL(url).pathname;
    const isState = init.method === 'POST' && path.endsWith('/guild-state');
    let body = init.body;
    if (isState && mangle !== undefined && typeof body === 'string') {
      const batch = JSON.parse(body) as { reports: Record<string, unknown>[] };
      if (batch.reports.some((report) => mangle?.(report) === true)) {
        mangle = undefined;
        body = JSON.stringify(batch);
      }
    }
    const response = await baseFetch(url, { ...init, body });
    if (isState && response.ok) {
      const receipt = (await response.clone().json()) as GuildStateReceipt;
      for (const guildId of receipt.resync) {
        if (!guilds.has(guildId) || drifted.has(guildId)) continue;
        drifted.add(guildId);
        say(
          `drift: the service's copy of ${nameOf(guildId)} no longer hashes as the bot's (GET /internal/guild-state: "drifted"); it asks for the guild whole (resync), and the bot sends it`,
        );
      }
    }
    return response;
  };

  const request = { baseUrl: options.baseUrl, token: options.token, fetch: watching };
  const onError =
    (feed: string) =>
    (error: ReporterError): void =>
      log(`${feed}: ${error.message}`);
  const membership: MembershipReporter = createMembershipReporter({
    ...request,
    onError: onError('membership'),
  });
  const guildState: GuildStateReporter = createGuildStateReporter({
    ...request,
    fullState: (guildId) => {
      const guild = guilds.get(guildId);
      return guild === undefined ? undefined : structuredClone(guild);
    },
    onError: onError('guild-state'),
  });
  const shardIds = Array.from({ length: shardCount }, (_, id) => id);
  const shardStats: ShardStatsReporter = createShardStatsReporter({
    ...request,
    shards: () =>
      shardIds.map((id) => {
        const own = [...guilds.values()].filter((guild) => shardOf(guild.id) === id);
        const seconds = (Date.now() - startedMs) / 1000;
        return {
          id,
          status: 'Ready' as const,
          real_latency: 20 + Math.round(Math.random() * 40),
          guilds: own.length,
          users: own.reduce((sum, guild) => sum + (world.members.get(guild.id) ?? 0), 0),
          uptime: seconds,
          total_uptime: seconds,
        };
      }),
    onError: onError('shard stats'),
  });
  function nameOf(guildId: string): string {
    return `${guilds.get(guildId)?.name ?? 'guild'} (${guildId})`;
  }

  say(
    `fake bot ${world.botId}: ${guilds.size} guilds from ${world.source}, ${shardCount} shard${shardCount === 1 ? '' : 's'}, reporting to ${options.baseUrl}`,
  );
  // Another process reporting the same shards would be taken over without a word on its side.
  const before = await membership.status();
  const reporting = before.shards.filter(
    (shard) =>
      shard.shard_id < shardCount &&
      shard.reported_at !== null &&
      Date.now() - Date.parse(shard.reported_at) < before.stale_after * 1000,
  );
  if (reporting.length > 0) {
    const ids = reporting.map((shard) => shard.shard_id).join(', ');
    say(
      `warning: shard ${ids} was reported in the last ${before.stale_after} s by another process (or an earlier run of this one): the fake bot takes it over, and that process's guild-state reports will be refused (409). Against the demo, start the service with DEMO_BOT_REPORTER=false`,
    );
  }
  // As a real bot does at READY: each shard's guild list, then each guild as GUILD_CREATE brings it.
  await shardStats.report();
  const readyAt = new Date();
  await Promise.all(
    shardIds.map((shardId) =>
      membership.snapshot(
        shardId,
        shardCount,
        [...guilds.keys()].filter((id) => shardOf(id) === shardId),
        readyAt,
      ),
    ),
  );
  for (const guild of guilds.values())
    guildState.guildCreate(shardOf(guild.id), structuredClone(guild));
  await guildState.flush();
  const status = await membership.status();
  const behind = await guildsBehind();
  const live = [...guilds.keys()].filter((id) => !behind.has(id)).length;
  say(
    `feeds ${status.live ? 'live' : 'NOT live'}: membership of ${status.guilds} guilds (GET /internal/bot-guilds), guild state of ${live} of ${guilds.size} (GET /internal/guild-state), ${shardCount} shard${shardCount === 1 ? '' : 's'} Ready (GET /bot-stats)`,
  );

  let changes = 0;
  async function change(): Promise<void> {
    changes += 1;
    const all = [...guilds.values()];
    const guild = all[(changes - 1) % all.length];
    const shardId = shardOf(guild.id);
    const drift = changes % (options.driftEvery ?? 3) === 0;
    const channel = guild.channels.find((candidate) => candidate.type === 0);
    if (changes % 2 === 1 || channel === undefined) {
      const role = {
        id: nextId(guild),
        name: `Fake role ${changes}`,
        permissions: '0',
        position: 1,
        managed: false,
      };
      guild.roles.push(role);
      if (drift) mangleNext('role_upsert', role.id);
      guildState.roleUpsert(shardId, guild.id, { ...role });
      say(`change: role "${role.name}" (${role.id}) created in ${nameOf(guild.id)}`);
    } else {
      const renamed: GuildStateChannel = {
        ...channel,
        name: `${baseName(channel.name)}-${changes}`,
      };
      guild.channels[guild.channels.indexOf(channel)] = renamed;
      if (drift) mangleNext('channel_upsert', channel.id);
      guildState.channelUpsert(shardId, guild.id, structuredClone(renamed));
      say(`change: channel ${channel.id} renamed #${renamed.name} in ${nameOf(guild.id)}`);
    }
    await guildState.flush();
    if (drifted.delete(guild.id)) {
      const behind = await guildsBehind();
      const reason = behind.get(guild.id);
      say(
        reason === undefined
          ? `healed: ${nameOf(guild.id)} is live again from the bot's full state, with no REST call`
          : `not healed yet: ${nameOf(guild.id)} is behind (${reason})`,
      );
    }
  }

  /** `GET /internal/guild-state`: the guilds per-guild routes do not read from the feed, and why. */
  async function guildsBehind(): Promise<Map<string, string>> {
    const response = await baseFetch(
      `${options.baseUrl.replace(/\/+$/, '')}/internal/guild-state`,
      {
        headers: { Authorization: `Bearer ${options.token}` },
        signal: AbortSignal.timeout(10_000),
      },
    );
    const body = (await response.json()) as {
      guilds_behind?: { guild_id: string; reason: string }[];
    };
    return new Map((body.guilds_behind ?? []).map((entry) => [entry.guild_id, entry.reason]));
  }

  /** The next report of `type` for `id` reaches the service with another name than the bot's. */
  function mangleNext(type: string, id: string): void {
    mangle = (report) => {
      const entity = (report.role ?? report.channel) as Record<string, unknown> | undefined;
      if (report.type !== type || !isRecord(entity) || entity.id !== id) return false;
      entity.name = `${String(entity.name)} (mangled on its way)`;
      return true;
    };
    say(
      'the next report is mangled on its way to the service (as a lost or damaged event would be)',
    );
  }

  const timer = setInterval(() => {
    change().catch((error: unknown) => log(`change failed: ${String(error)}`));
  }, options.changeEveryMs ?? 15_000);

  return {
    guilds: world.guilds,
    change,
    async stop() {
      clearInterval(timer);
      const results = await Promise.allSettled([
        membership.close(),
        guildState.close(),
        shardStats.close(),
      ]);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      say('stopped: shards reported Closed');
    },
  };
}

function baseName(name: string | null): string {
  return (name ?? 'channel').replace(/-\d+$/, '');
}

/** An id for a new role: above every id the guild holds, so never one of them. */
function nextId(guild: GuildState): string {
  let max = BigInt(guild.id);
  for (const { id } of [...guild.roles, ...guild.channels, ...guild.threads]) {
    if (BigInt(id) > max) max = BigInt(id);
  }
  return String(max + 1n);
}

interface World {
  botId: string;
  source: string;
  guilds: GuildState[];
  /** Members per guild, for the shard stats' `users`. */
  members: Map<string, number>;
}

async function loadWorld(spec: FakeBotOptions['world'], fetchImpl: FetchLike): Promise<World> {
  if ('guilds' in spec) return madeUpWorld(spec.guilds);
  return platformWorld(spec.platformUrl, spec.botToken, fetchImpl);
}

/** Guilds of its own: a few roles, a category with two text channels, the bot's member. */
function madeUpWorld(count: number): World {
  // Snowflakes of about now, so that they look like ids the platform gives.
  const base = (BigInt(Date.now()) - 1420070400000n) << 22n;
  const guilds: GuildState[] = [];
  const members = new Map<string, number>();
  for (let n = 1; n <= count; n += 1) {
    // A millisecond apart: consecutive guilds land on consecutive shards (Discord's rule).
    const guildId = base + (BigInt(n) << 22n);
    const id = (offset: number): string => String(guildId + BigInt(offset));
    const guild: GuildState = {
      id: id(0),
      name: `Fake Guild ${n}`,
      icon: null,
      owner_id: '1100000000000000011',
      roles: [
        { id: id(0), name: '@everyone', permissions: '104324673', position: 0, managed: false },
        { id: id(1), name: 'Fake Bot', permissions: '268446720', position: 2, managed: true },
        { id: id(2), name: 'Moderator', permissions: '8192', position: 1, managed: false },
      ],
      channels: [
        channel(id(10), 4, 'Text', 0, null),
        channel(id(11), 0, 'general', 1, id(10)),
        channel(id(12), 0, 'mod-log', 2, id(10)),
      ],
      threads: [],
      bot_member: { user_id: FAKE_BOT_ID, roles: [id(1)], communication_disabled_until: null },
    };
    guilds.push(guild);
    members.set(guild.id, 10 * n);
  }
  return { botId: FAKE_BOT_ID, source: 'its own made-up world', guilds, members };
}

function channel(
  id: string,
  type: number,
  name: string,
  position: number,
  parentId: string | null,
): GuildStateChannel {
  return { id, type, name, position, parent_id: parentId, flags: 0, permission_overwrites: [] };
}

/** The bot's guilds as a platform's REST API gives them (what GUILD_CREATE would bring). */
async function platformWorld(
  platformUrl: string,
  botToken: string,
  fetchImpl: FetchLike,
): Promise<World> {
  const base = `${platformUrl.replace(/\/+$/, '')}/v10`;
  const get = async (path: string): Promise<unknown> => {
    const response = await fetchImpl(`${base}${path}`, {
      headers: { Authorization: `Bot ${botToken}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) {
      throw new Error(
        `GET ${base}${path}: ${response.status} (is ${platformUrl} the platform's API, and the bot token right?)`,
      );
    }
    return response.json();
  };
  const me = (await get('/users/@me')) as { id: string };
  const list = (await get('/users/@me/guilds')) as { id: string }[];
  const guilds: GuildState[] = [];
  const members = new Map<string, number>();
  for (const { id } of list) {
    const guild = (await get(`/guilds/${id}?with_counts=true`)) as GuildState & {
      approximate_member_count?: number;
    };
    const channels = (await get(`/guilds/${id}/channels`)) as (GuildStateChannel & {
      permission_overwrites?: GuildStateChannel['permission_overwrites'];
    })[];
    const { threads } = (await get(`/guilds/${id}/threads/active`)) as {
      threads: {
        id: string;
        type: number;
        name: string | null;
        parent_id: string;
        flags?: number;
        thread_metadata?: { archived?: boolean };
      }[];
    };
    const member = (await get(`/guilds/${id}/members/${me.id}`)) as {
      roles: string[];
      communication_disabled_until?: string | null;
    };
    guilds.push({
      id,
      name: guild.name,
      icon: guild.icon,
      owner_id: guild.owner_id,
      roles: guild.roles.map(({ id: roleId, name, permissions, position, managed }) => ({
        id: roleId,
        name,
        permissions,
        position,
        managed,
      })),
      channels: channels.map((entry) => ({
        id: entry.id,
        type: entry.type,
        name: entry.name,
        position: entry.position,
        parent_id: entry.parent_id ?? null,
        flags: entry.flags ?? 0,
        permission_overwrites: (entry.permission_overwrites ?? []).map((overwrite) => ({
          id: overwrite.id,
          type: Number(overwrite.type) === 1 ? 1 : 0,
          allow: overwrite.allow,
          deny: overwrite.deny,
        })),
      })),
      threads: threads.map((thread) => ({
        id: thread.id,
        type: thread.type,
        name: thread.name,
        parent_id: thread.parent_id,
        flags: thread.flags ?? 0,
        archived: thread.thread_metadata?.archived === true,
      })),
      bot_member: {
        user_id: me.id,
        roles: member.roles,
        communication_disabled_until: member.communication_disabled_until ?? null,
      },
    });
    members.set(id, guild.approximate_member_count ?? 0);
  }
  return { botId: me.id, source: platformUrl, guilds, members };
}
