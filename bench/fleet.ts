import { randomBytes } from 'node:crypto';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { proxyRequests } from '@discordjs/proxy';
import { REST } from '@discordjs/rest';
import {
  ChannelType,
  OverwriteType,
  PermissionFlagsBits as P,
  type APIOverwrite,
  type APIUser,
} from 'discord-api-types/v10';
import {
  createGuildStateReporter,
  type GuildStateReporter,
} from 'clients/bot-reporter/src/guild-state-reporter';
import { shardOfGuild } from 'clients/bot-reporter/src/contract';
import type { ReporterError } from 'clients/bot-reporter/src/transport';
import { DEMO_SEED, EVERYONE_DEFAULT } from 'src/platform/emulator/demo.seed';
import type {
  EmulatorSeed,
  SeedChannel,
  SeedGuild,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';
import type { GuildStateChange } from 'src/platform/emulator/emulator.state';
import {
  MEMBER_READ_SCOPE,
  PlatformEmulator,
  type EmulatedRequest,
} from 'src/platform/emulator/platform-emulator';
import { BENCH_ADMIN_URL, freshPostgresDatabase } from './database';
import { integer, readArguments } from './options';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:fleet`: several instances of the built service share one bot token, as a fleet
 * behind a load balancer does, against a platform that enforces its limits.
 *
 * The emulator runs with the platform's rate limits on (a global 50 requests/s per token, per-route
 * buckets, the token endpoint's 10 a second per address, 429 bodies and headers) and a latency on
 * every answer (default 100 ms). The instances (default 3) run on one PostgreSQL database and one
 * Redis, and learn the bot's guilds (default 10,000, mostly small, some medium and large) through
 * the membership feed, as the bot reports them. With the guild-state feed (the default), the
 * simulated bot also sends each guild's full state through `createGuildStateReporter`, as a bot's
 * GUILD_CREATEs bring them, then every change the emulated platform makes to its guilds while the
 * users run (default 3 a second) and its heartbeats.
 *
 * Simulated dashboard users (default 1,000), started evenly over the run (default 2 minutes), each
 * log in (or, a returning user, come back with the session of an earlier visit, made before the
 * run), list their guilds, open a guild nobody opened yet, one someone did, and an invented id,
 * follow one of their guilds' event stream, view its settings and change one, and wait for the
 * change on the stream. A share of the logins grant `guilds.members.read`. Requests go to the
 * instances in turn; each user logs in from an address of its own, and the service's per-caller
 * budgets are on, as in production.
 *
 * Attackers run beside the users, each within every per-caller limit (the patterns of a bot's worst
 * day): accounts (default 6) that belong to many guilds nobody opened, without any permission there,
 * each asking one of them for its settings' revisions every 220 ms (the route loads the guild
 * before it refuses them); and addresses (default 12) that each send ten made-up OAuth2 codes at
 * once, twelve fresh addresses every 5 s. The report counts what the attackers were answered, and
 * how fast their refusals came.
 *
 * With `--restart-at`, the simulated bot restarts while the users run: every shard (one per 1,000
 * guilds) starts a new membership snapshot and a new guild-state stream and re-sends its guilds'
 * GUILD_CREATEs, 16 shards every 5 s as the platform's `max_concurrency` of 16 lets them identify.
 * The report tells how long until every guild was live again, how the users' opens meanwhile were
 * served, and what the platform saw in that window.
 *
 * Each run is one combination of the guild-state feed (on, off) and the REST proxy (off: each
 * instance calls the platform itself; on: every bot-token call through one `@discordjs/proxy`,
 * configured as its container is). For each run it prints what the platform would have seen (429s,
 * global and per route; invalid answers against the address's budget), bot-token and token
 * endpoint calls a second, platform calls by route, each step's p50 and p99, and every error a user
 * saw.
 *
 * Needs PostgreSQL and Redis: a database of its own is created on BENCH_DATABASE_URL's server
 * (bench/database.ts) and dropped after each run.
 */

const USAGE = `npm run bench:fleet -- [options]

  --instances=<n>        service instances (env FLEET_INSTANCES; default 3)
  --guilds=<n>           guilds of the bot (env FLEET_GUILDS; default 10000)
  --users=<n>            simulated dashboard users (env FLEET_USERS; default 1000)
  --duration-s=<s>       the users start evenly over this time (env FLEET_DURATION_S; default 120)
  --latency-ms=<ms>      platform latency added to every answer (env FLEET_LATENCY_MS; default 100)
  --proxy=both|off|on    run without the REST proxy, with it, or both (env FLEET_PROXY; default both)
  --guild-state=off|on|both
                         the bot feeds each guild's state (the guild-state feed), or not
                         (GUILD_STATE_FEED=false, every guild from the platform), or both
                         (env FLEET_GUILD_STATE; default on)
  --returning=<%>        users who come back with a session kept from an earlier visit (made before
                         the run, at the token endpoint's pace; not logins of the run)
                         (env FLEET_RETURNING; default 80 with the guild-state feed, 0 without)
  --member-scope=<%>     users whose login granted guilds.members.read (the others' own member is
                         read with the bot token) (env FLEET_MEMBER_SCOPE; default 90 with the
                         guild-state feed, 0 without)
  --attackers=<n>        accounts flooding cold guilds they belong to without permission, a request
                         every 220 ms each (env FLEET_ATTACKERS; default 6; 0 for none)
  --code-addresses=<n>   addresses sending bursts of ten made-up OAuth2 codes each, n fresh ones
                         every 5 s (env FLEET_CODE_ADDRESSES; default 12; 0 for none)
  --changes-per-s=<n>    changes the platform makes to the bot's guilds a second while the users
                         run (a channel renamed, a thread made or archived, a role's permissions, a
                         guild renamed), reported by the bot with the feed (env FLEET_CHANGES_PER_S;
                         default 3)
  --restart-at=<s>       the bot restarts this many seconds into the users' part: every shard (one
                         per 1,000 guilds) starts a new membership snapshot and guild-state stream
                         and re-sends its guilds, 16 shards every 5 s (max_concurrency 16); the
                         report adds the restart's window (env FLEET_RESTART_AT; default none)
  --write                also write the report to bench/fleet-results.md
  --help                 this text

  Without the guild-state feed, and without --returning and --member-scope, a run is the benchmark
  as it was before the feed: every user logs in during the run, without guilds.members.read.

  BENCH_DATABASE_URL  PostgreSQL, where a database of the run's own is made (default postgres://postgres@127.0.0.1:5432/postgres)
  FLEET_REDIS_URL     Redis (default redis://127.0.0.1:6379)`;

type Mode = 'off' | 'on';

interface Options {
  instances: number;
  guilds: number;
  users: number;
  durationS: number;
  latencyMs: number;
  proxies: Mode[];
  guildStates: Mode[];
  /** Percent; null: the run's default (80 with the feed, 0 without). */
  returning: number | null;
  /** Percent; null: the run's default (90 with the feed, 0 without). */
  memberScope: number | null;
  changesPerS: number;
  attackers: number;
  codeAddresses: number;
  /** Seconds into the users' part at which the bot restarts; null: it does not. */
  restartAt: number | null;
  write: boolean;
  redisUrl: string;
}

interface RunSpec {
  guildState: Mode;
  proxy: Mode;
  returningPercent: number;
  memberScopePercent: number;
}

const REDIRECT = DEFAULT_REDIRECT_URI;
/** A fixed key: every instance of a run must decrypt the grants the others stored. */
const TOKEN_ENCRYPTION_KEY = Buffer.alloc(32, 11).toString('base64');
/** Guild ids per membership-feed part (the service takes up to 4,000). */
const FEED_PART = 4_000;
/** Guilds per shard of the simulated bot (the platform requires a shard per 2,500 at most). */
const GUILDS_PER_SHARD = 1_000;
/** A large bot's `max_concurrency`: this many shards identify at once, every IDENTIFY_EVERY_MS. */
const MAX_CONCURRENCY = 16;
const IDENTIFY_EVERY_MS = 5_000;
/** GUILD_CREATEs the simulated bot makes in a row before its reports may leave (a loop's turn). */
const GUILD_CREATES_IN_A_ROW = 10;
/** How long a restart may take until every guild is live again before the run gives up waiting. */
const RESTART_WAIT_MS = 600_000;
/**
 * Retries of an earlier visit's login refused with 429: those logins are made while the bot's guild
 * states are fed, on a machine busy with it, and are not what the run measures.
 */
const EARLIER_VISIT_RETRIES = 5;
/** Other members per guild besides its owner and the bot. */
const MEMBERS_PER_GUILD = 4;
/** A guild opened this recently is warm in the fleet's platform cache (PLATFORM_CACHE_TTL 5 s). */
const WARM_WITHIN_MS = 4_000;
/** How often the simulated bot says it is still connected (the feed is trusted for 120 s). */
const BOT_HEARTBEAT_MS = 30_000;
/** How long a user waits on its stream for the change it made. */
const STREAM_WAIT_MS = 5_000;
/** Every answer a user waits for longer than this is an error (a stuck request). */
const REQUEST_TIMEOUT_MS = 30_000;
/** The emulated token endpoint's bucket per address (emulator-rate-limits.ts). */
const TOKEN_ENDPOINT_PER_SECOND = 10;
/** An attacking account's pace: under the general budget of 300 requests a minute. */
const ATTACK_EVERY_MS = 220;
/** Guilds each attacking account belongs to (none of them opened by the users). */
const GUILDS_PER_ATTACKER = 600;
/** Made-up codes each attacking address sends at once: its whole `oauth2` budget of a minute. */
const CODES_PER_ADDRESS = 10;
/** A burst of made-up codes from fresh addresses this often. */
const CODE_BURST_EVERY_MS = 5_000;
/** The attacking accounts' ids. */
const ATTACKER_BASE = 1_350_000_000_000_000_000n;

const GUILD_BASE = 1_200_000_000_000_000_000n;
/**
 * Consecutive guilds' ids are this far apart: a snowflake's time starts at bit 22, so the platform's
 * sharding rule puts consecutive guilds on consecutive shards.
 */
const GUILD_ID_STEP = 1n << 22n;
const USER_BASE = 1_300_000_000_000_000_000n;
/** Ids no guild has: the invented ids users open. */
const INVENTED_BASE = 1_400_000_000_000_000_000n;
/** The ids of a guild's roles, channels and threads beyond its first few: 1,000 per guild. */
const ENTITY_BASE = 1_600_000_000_000_000_000n;
/** Where each kind's ids start within a guild's 1,000. */
const ROLE_IDS = 0;
const CHANNEL_IDS = 300;
const THREAD_IDS = 800;
/** Threads the platform makes while the users run reuse these, in turn. */
const RUN_THREAD_IDS = 950;

/**
 * What a guild holds besides the few every guild has (@everyone, the bot's role, Member, #general,
 * #mod-log): ranges drawn from evenly, and the share of guilds of each size. Most guilds a moderation
 * bot is in are small; a few are communities at the platform's scale (it allows 250 roles and 500
 * channels).
 */
const SIZES = {
  small: { share: 0.8, roles: [2, 8], channels: [3, 14], threads: [0, 2], hidden: [0, 1] },
  medium: { share: 0.17, roles: [12, 45], channels: [25, 80], threads: [2, 20], hidden: [2, 6] },
  large: {
    share: 0.03,
    roles: [80, 240],
    channels: [150, 440],
    threads: [20, 140],
    hidden: [8, 30],
  },
} as const;
type Size = keyof typeof SIZES;

const STEPS = [
  'login',
  'list guilds',
  'open cold guild',
  'open warm guild',
  'open invented id',
  'follow events',
  'view settings',
  'change a setting',
  'see the change',
] as const;
type Step = (typeof STEPS)[number];

interface World {
  /**
   * The platform's users and guilds, made anew for each run: the emulator keeps a copy of its own,
   * and a world of 100,000 guilds held twice (here and there) takes gigabytes.
   */
  seed: () => EmulatorSeed;
  application: EmulatorSeed['application'];
  /** Accounts that flood cold guilds, and the guilds each belongs to without permission. */
  attackers: string[];
  attackedGuilds: Map<string, string[]>;
  botId: string;
  operator: string;
  users: string[];
  /** Per user, two draws from [0, 1): whether it returns, whether it granted the member scope. */
  draws: { returning: number; scope: number }[];
  /** Per user: the guilds it is a member of (owned ones first). */
  guildsOf: Map<string, string[]>;
  /** Per user: the guild it owns, opens cold, follows and changes (the first of its guilds). */
  ownedBy: Map<string, string>;
  guildIds: string[];
  /** The bot's shards (one per GUILDS_PER_SHARD guilds), and each one's guilds. */
  shardCount: number;
  shardGuilds: string[][];
  sizes: Record<Size, number>;
  /** Roles, channels (categories included) and active threads, over every guild. */
  entities: { roles: number; channels: number; threads: number };
}

interface StepResult {
  step: Step;
  /** When it started (performance.now()), and how long it took. */
  at: number;
  ms: number;
  /** The guild it opened, for the steps that open one. */
  guild?: string;
  /** What went wrong, as the user saw it; null when the step did what it should. */
  error: string | null;
}

/** What the simulated bot sent through the guild-state feed. */
interface FeedReport {
  /** The first GUILD_CREATEs: guilds, bytes of their reports, seconds until live everywhere. */
  fedGuilds: number;
  fedBytes: number;
  fedSeconds: number;
  /** During the users' part: batches sent (heartbeats included), failed ones, reporter errors. */
  batches: number;
  failedBatches: number;
  reporterErrors: string[];
  changes: number;
  /** `GET /internal/guild-state` at the end: live guilds, and those behind by reason. */
  live: number;
  guilds: number;
  behind: Record<string, number>;
}

/** The bot's restart while the users ran (`--restart-at`). */
interface RestartReport {
  shards: number;
  /** Guilds whose GUILD_CREATE the new streams re-sent, and the bytes of their batches. */
  guilds: number;
  bytes: number;
  /**
   * From the restart: until the last shard identified, and until every instance held every guild
   * live on a new stream (null: not within RESTART_WAIT_MS).
   */
  identifiedSeconds: number;
  liveSeconds: number | null;
  /**
   * The window, from the restart until every guild was live again: performance.now() for the users'
   * steps, the emulator's clock for its request log.
   */
  from: number;
  until: number;
  fromAt: number;
  untilAt: number;
  /**
   * When each shard's new stream had re-sent all its guilds, the service having taken every batch
   * (performance.now()); until then, what its guilds serve is the replaced stream's last state.
   */
  resentAt: number[];
  /** Batches of the new streams not answered 200, and reporter errors, in the window. */
  failedBatches: number;
  reporterErrors: string[];
  /** When it did not end in time: what the instances last said was behind. */
  behind: Record<string, number>;
}

/** What the attackers were answered: by status, and how long each refusal (429) took. */
interface AttackReport {
  guildRequests: Map<number, number>;
  guildRefusalMs: number[];
  codes: Map<number, number>;
  codeRefusalMs: number[];
}

interface RunReport extends RunSpec {
  results: StepResult[];
  attack: AttackReport;
  /**
   * Users' changes the stream's `ready` already held: the stream answered, the change committed,
   * then the stream read its position (GuildFollower.begin), so no event came for it.
   */
  heldByReady: number;
  /** The emulator's request log for the users' part of the run. */
  requests: EmulatedRequest[];
  invalidAnswers: number;
  durationS: number;
  /** Users who came back with a session made before the run, and how long making them took. */
  returningUsers: number;
  keptSessionsSeconds: number;
  scopedUsers: number;
  feed: FeedReport | null;
  restart: RestartReport | null;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const world = buildWorld(options);
  console.log(
    `the world: ${world.guildIds.length} guilds (${world.sizes.small} small, ${world.sizes.medium} medium, ${world.sizes.large} large; ${world.entities.roles} roles, ${world.entities.channels} channels, ${world.entities.threads} threads), ${world.users.length} users`,
  );
  const reports: RunReport[] = [];
  for (const guildState of options.guildStates) {
    for (const proxy of options.proxies) {
      const spec: RunSpec = {
        guildState,
        proxy,
        returningPercent: options.returning ?? (guildState === 'on' ? 80 : 0),
        memberScopePercent: options.memberScope ?? (guildState === 'on' ? 90 : 0),
      };
      console.log(`\n=== run ${reports.length + 1}: ${label(spec)}`);
      reports.push(await run(options, world, spec));
    }
  }
  const markdown = report(options, world, reports);
  console.log(`\n${markdown}`);
  if (options.write) writeResults(markdown);
}

const RESULTS_TITLE = '# Fleet simulation (`npm run bench:fleet`)';

/**
 * Writes a report's section to bench/fleet-results.md: it replaces the section of the same heading
 * (the same load, feed and proxy runs), and keeps the others, so that a run before a change and one
 * after it can stand side by side.
 */
function writeResults(section: string): void {
  const path = join(ROOT, 'bench', 'fleet-results.md');
  const heading = section.slice(0, section.indexOf('\n'));
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const sections = existing
    .split(/^(?=## )/m)
    .filter((part) => part.startsWith('## ') && !part.startsWith(`${heading}\n`))
    .map((part) => part.trimEnd());
  sections.push(section.trimEnd());
  writeFileSync(path, `${RESULTS_TITLE}\n\n${sections.join('\n\n')}\n`);
}

function label(spec: Pick<RunSpec, 'guildState' | 'proxy'>): string {
  return `${spec.guildState === 'on' ? 'guild state fed' : 'no guild state'}, ${spec.proxy === 'on' ? 'with the REST proxy' : 'without the proxy'}`;
}

// --- Options -------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const known = [
    'instances',
    'guilds',
    'users',
    'duration-s',
    'latency-ms',
    'proxy',
    'guild-state',
    'returning',
    'member-scope',
    'changes-per-s',
    'attackers',
    'code-addresses',
    'restart-at',
    'write',
  ];
  const values = readArguments(args, known, USAGE);
  const value = (name: string, variable: string, fallback: string): string =>
    values.get(name) ?? env[variable] ?? fallback;
  const modes = (name: string, variable: string, fallback: string): Mode[] => {
    const given = value(name, variable, fallback);
    if (!['both', 'off', 'on'].includes(given)) {
      throw new Error(`--${name} must be both, off or on, not "${given}"`);
    }
    return given === 'both' ? ['off', 'on'] : [given as Mode];
  };
  const percent = (name: string, variable: string): number | null => {
    const given = values.get(name) ?? env[variable];
    if (given === undefined) return null;
    const parsed = integer(`--${name}`, given, 0);
    if (parsed > 100) throw new Error(`--${name} is a percentage, at most 100, not "${given}"`);
    return parsed;
  };
  const durationS = integer('--duration-s', value('duration-s', 'FLEET_DURATION_S', '120'), 1);
  const restartGiven = values.get('restart-at') ?? env.FLEET_RESTART_AT;
  const restartAt = restartGiven === undefined ? null : integer('--restart-at', restartGiven, 0);
  if (restartAt !== null && restartAt >= durationS) {
    throw new Error(`--restart-at must fall within the users' part (--duration-s=${durationS})`);
  }
  return {
    instances: integer('--instances', value('instances', 'FLEET_INSTANCES', '3'), 1),
    guilds: integer('--guilds', value('guilds', 'FLEET_GUILDS', '10000'), 10),
    users: integer('--users', value('users', 'FLEET_USERS', '1000'), 1),
    durationS,
    latencyMs: integer('--latency-ms', value('latency-ms', 'FLEET_LATENCY_MS', '100'), 0),
    proxies: modes('proxy', 'FLEET_PROXY', 'both'),
    guildStates: modes('guild-state', 'FLEET_GUILD_STATE', 'on'),
    returning: percent('returning', 'FLEET_RETURNING'),
    memberScope: percent('member-scope', 'FLEET_MEMBER_SCOPE'),
    changesPerS: integer('--changes-per-s', value('changes-per-s', 'FLEET_CHANGES_PER_S', '3'), 0),
    attackers: integer('--attackers', value('attackers', 'FLEET_ATTACKERS', '6'), 0),
    codeAddresses: integer(
      '--code-addresses',
      value('code-addresses', 'FLEET_CODE_ADDRESSES', '12'),
      0,
    ),
    restartAt,
    write: values.has('write'),
    redisUrl: env.FLEET_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}

// --- The world -----------------------------------------------------------------------------------

/** A fixed sequence: every run of the benchmark has the same world. */
function sequence(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
}

function buildWorld(options: Options): World {
  return generateWorld(options).world;
}

/** The world and its guilds; the same options make the same world. */
function generateWorld(options: Options): { world: World; guilds: SeedGuild[] } {
  const botId = DEMO_SEED.application.id;
  const bot = DEMO_SEED.users.find((user) => user.id === botId);
  if (!bot) throw new Error('the demo seed has no bot user');
  const users = Array.from({ length: options.users }, (_, i) => (USER_BASE + BigInt(i)).toString());
  const operator = (USER_BASE + 999_999n).toString();
  const guildsOf = new Map<string, string[]>(users.map((id) => [id, []]));
  const ownedBy = new Map<string, string>();
  const guilds: SeedGuild[] = [];
  const random = sequence(0x2545f491);
  // The guilds' sizes from a sequence of their own, so that who is in which guild stays as before.
  const sizeRandom = sequence(0x1b873593);
  const sizes: Record<Size, number> = { small: 0, medium: 0, large: 0 };
  for (let g = 0; g < options.guilds; g++) {
    const id = (GUILD_BASE + BigInt(g) * GUILD_ID_STEP).toString();
    const owner = users[g % users.length];
    const members = new Set([owner]);
    while (members.size < Math.min(users.length, MEMBERS_PER_GUILD + 1)) {
      members.add(users[random(users.length)]);
    }
    for (const member of members) {
      const list = guildsOf.get(member)!;
      if (member === owner) list.unshift(id);
      else list.push(id);
    }
    // The guild they own that heads their list: the one they open cold, then follow and change.
    ownedBy.set(owner, id);
    const draw = sizeRandom(1_000) / 1_000;
    const size: Size =
      draw < SIZES.small.share
        ? 'small'
        : draw < SIZES.small.share + SIZES.medium.share
          ? 'medium'
          : 'large';
    sizes[size] += 1;
    guilds.push(guild(g, id, owner, [...members], botId, size, sizeRandom));
  }
  const entities = { roles: 0, channels: 0, threads: 0 };
  for (const g of guilds) {
    entities.roles += g.roles.length;
    for (const channel of g.channels) {
      if (isThread(channel)) entities.threads += 1;
      else entities.channels += 1;
    }
  }
  // The attackers join guilds from the second half of the list, which the users' cold opens (their
  // own guilds, the first ones) do not reach; no random draw, so the users' world stays the same.
  const attackers = Array.from({ length: options.attackers }, (_, i) =>
    (ATTACKER_BASE + BigInt(i)).toString(),
  );
  const attackedGuilds = new Map<string, string[]>(attackers.map((id) => [id, []]));
  const half = Math.floor(guilds.length / 2);
  for (const [k, attacker] of attackers.entries()) {
    for (let n = 0; n < GUILDS_PER_ATTACKER; n++) {
      const target = guilds[half + ((k + n * attackers.length) % (guilds.length - half))];
      if (target.members.some((member) => member.user_id === attacker)) continue;
      target.members.push({ user_id: attacker, roles: [], joined_at: target.members[0].joined_at });
      attackedGuilds.get(attacker)?.push(target.id);
    }
  }
  const shardCount = Math.ceil(guilds.length / GUILDS_PER_SHARD);
  const shardGuilds = Array.from({ length: shardCount }, (): string[] => []);
  for (const g of guilds) shardGuilds[shardOfGuild(g.id, shardCount)].push(g.id);
  const drawRandom = sequence(0x68e31da4);
  const draws = users.map(() => ({
    returning: drawRandom(1_000_000) / 1_000_000,
    scope: drawRandom(1_000_000) / 1_000_000,
  }));
  const user = (id: string, username: string): APIUser => ({
    id,
    username,
    global_name: null,
    discriminator: '0',
    avatar: null,
  });
  const world: World = {
    application: DEMO_SEED.application,
    seed: () => ({
      application: DEMO_SEED.application,
      users: [
        bot,
        user(operator, 'operator'),
        ...users.map((id, i) => user(id, `user${i}`)),
        ...attackers.map((id, i) => user(id, `attacker${i}`)),
      ],
      guilds: generateWorld(options).guilds,
    }),
    attackers,
    attackedGuilds,
    botId,
    operator,
    users,
    draws,
    guildsOf,
    ownedBy,
    guildIds: guilds.map((g) => g.id),
    shardCount,
    shardGuilds,
    sizes,
    entities,
  };
  return { world, guilds };
}

function isThread(channel: SeedChannel): boolean {
  return (
    channel.type === ChannelType.PublicThread ||
    channel.type === ChannelType.PrivateThread ||
    channel.type === ChannelType.AnnouncementThread
  );
}

/** The id of a guild's `n`th role, channel or thread beyond its first few. */
function entityId(guildIndex: number, n: number): string {
  return (ENTITY_BASE + BigInt(guildIndex) * 1_000n + BigInt(n)).toString();
}

function guildIndexOf(guildId: string): number {
  return Number((BigInt(guildId) - GUILD_BASE) / GUILD_ID_STEP);
}

/** Permissions an extra role may hold, as communities give them. */
const ROLE_PERMISSIONS = [
  0n,
  P.ViewChannel | P.SendMessages | P.ReadMessageHistory,
  P.ManageMessages | P.MuteMembers | P.MoveMembers,
  P.KickMembers | P.ModerateMembers | P.ManageMessages,
  P.ManageChannels | P.ManageThreads,
  P.MentionEveryone | P.AttachFiles | P.EmbedLinks,
].map(String);

function guild(
  index: number,
  id: string,
  owner: string,
  members: string[],
  botId: string,
  size: Size,
  random: (n: number) => number,
): SeedGuild {
  const at = (n: number): string => (BigInt(id) + BigInt(n)).toString();
  const within = ([low, high]: readonly [number, number]): number => low + random(high - low + 1);
  const shape = SIZES[size];
  const joined = '2024-01-01T00:00:00.000Z';
  const extraRoles: SeedRole[] = Array.from({ length: within(shape.roles) }, (_, k) => ({
    id: entityId(index, ROLE_IDS + k),
    name: k === 0 ? 'Staff' : `role ${k}`,
    permissions: ROLE_PERMISSIONS[k === 0 ? 3 : random(ROLE_PERMISSIONS.length)],
    position: 3 + k,
  }));
  const roles: SeedRole[] = [
    { id, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
    {
      id: at(1),
      name: 'Moderation Bot',
      permissions: (P.ManageRoles | P.KickMembers | P.BanMembers | P.ViewChannel).toString(),
      position: 2,
      managed: true,
      tags: { bot_id: botId },
    },
    { id: at(2), name: 'Member', permissions: '0', position: 1 },
    ...extraRoles,
  ];
  const channels: SeedChannel[] = [
    { id: at(10), type: ChannelType.GuildText, name: 'general', position: 0 },
    { id: at(11), type: ChannelType.GuildText, name: 'mod-log', position: 1 },
  ];
  const overwrite = (role: string, allow: bigint, deny: bigint): APIOverwrite => ({
    id: role,
    type: OverwriteType.Role,
    allow: allow.toString(),
    deny: deny.toString(),
  });
  let next = CHANNEL_IDS;
  // Channels the bot cannot view: a staff category and its channels, denied to @everyone and
  // allowed to Staff (the bot does not hold it), so its gateway sees them obfuscated.
  const hidden = within(shape.hidden);
  if (hidden > 0 && extraRoles.length > 0) {
    const staff = extraRoles[0].id;
    const overwrites = [overwrite(id, 0n, P.ViewChannel), overwrite(staff, P.ViewChannel, 0n)];
    const category = entityId(index, next++);
    channels.push({
      id: category,
      type: ChannelType.GuildCategory,
      name: 'staff',
      position: 0,
      permission_overwrites: overwrites,
    });
    for (let k = 1; k < hidden; k++) {
      channels.push({
        id: entityId(index, next++),
        type: ChannelType.GuildText,
        name: `staff-${k}`,
        position: k,
        parent_id: category,
        permission_overwrites: overwrites,
      });
    }
  }
  // The rest in categories of up to 10, text mostly, some voice and announcement channels; every
  // third with an overwrite for one of the roles.
  const visible = within(shape.channels);
  let category: string | null = null;
  const textChannels = [at(10)];
  for (let k = 0; k < visible; k++) {
    if (k % 11 === 0 && visible > 6) {
      category = entityId(index, next++);
      channels.push({
        id: category,
        type: ChannelType.GuildCategory,
        name: `category ${k / 11}`,
        position: k / 11 + 1,
      });
      continue;
    }
    const kind = random(10);
    const type =
      kind < 7
        ? ChannelType.GuildText
        : kind < 9
          ? ChannelType.GuildVoice
          : ChannelType.GuildAnnouncement;
    const channel: SeedChannel = {
      id: entityId(index, next++),
      type,
      name: `channel-${k}`,
      position: k % 11,
      parent_id: category,
    };
    if (k % 3 === 0 && extraRoles.length > 0) {
      const role = extraRoles[random(extraRoles.length)].id;
      channel.permission_overwrites = [
        overwrite(role, P.SendMessages | P.AttachFiles, 0n),
        ...(type === ChannelType.GuildAnnouncement ? [overwrite(id, 0n, P.SendMessages)] : []),
      ];
    }
    if (type === ChannelType.GuildText) textChannels.push(channel.id);
    channels.push(channel);
  }
  const threads = within(shape.threads);
  for (let k = 0; k < threads; k++) {
    channels.push({
      id: entityId(index, THREAD_IDS + k),
      type: ChannelType.PublicThread,
      name: `thread ${k}`,
      position: 0,
      parent_id: textChannels[random(textChannels.length)],
    });
  }
  return {
    id,
    name: `guild ${id.slice(-7)}`,
    icon: null,
    owner_id: owner,
    roles,
    channels,
    members: [
      { user_id: botId, roles: [at(1)], joined_at: joined },
      ...members.map((user) => ({ user_id: user, roles: [at(2)], joined_at: joined })),
    ],
  };
}

/** The role of a guild the users' change gives a permission. */
function memberRole(guildId: string): string {
  return (BigInt(guildId) + 2n).toString();
}

// --- One run -------------------------------------------------------------------------------------

async function run(options: Options, world: World, spec: RunSpec): Promise<RunReport> {
  const database = await freshPostgresDatabase('bms_fleet');
  if (!database) throw new Error(`PostgreSQL cannot be reached at ${BENCH_ADMIN_URL}`);
  // The emulator's clock: the platform's, moved on only while the sessions of earlier visits are
  // made (below); from the users' part on it runs as the wall clock does.
  let earlierVisitsMs = 0;
  const emulator = await PlatformEmulator.start(
    world.seed(),
    {},
    {
      maxLoggedRequests: 10_000_000,
      rateLimits: {},
      now: () => Date.now() + earlierVisitsMs,
    },
  );
  const proxyServer = spec.proxy === 'on' ? await startProxy(emulator.apiUrl) : null;
  const services: ServiceProcess[] = [];
  let bot: SimulatedBot | null = null;
  let stopForwarding = (): void => undefined;
  try {
    const env: Record<string, string> = {
      DATABASE_URL: database.url,
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: `fleet-${randomBytes(4).toString('hex')}:`,
      TOKEN_ENCRYPTION_KEY,
      DISCORD_BOT_TOKEN: world.application.bot_token,
      DISCORD_CLIENT_ID: world.application.id,
      DISCORD_CLIENT_SECRET: world.application.secret,
      DISCORD_API_URL: emulator.apiUrl,
      ROOT_USERS: world.operator,
      LOG_LEVEL: 'warn',
      GUILD_STATE_FEED: spec.guildState === 'on' ? 'true' : 'false',
      // The benchmark plays the load balancer: each user, and each sender of made-up codes, names
      // its address; the service's per-caller budgets are on, as in production.
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMITS_ENABLED: 'true',
      ...(proxyServer ? { DISCORD_REST_PROXY_URL: proxyServer.url } : {}),
    };
    // The first instance migrates the new database; the others start on it together.
    const logs = mkdtempSync(join(tmpdir(), `bms-fleet-${spec.guildState}-${spec.proxy}-`));
    const log = (n: number): string => join(logs, `instance-${n}.log`);
    services.push(await startServiceProcess(env, log(0)));
    services.push(
      ...(await Promise.all(
        Array.from({ length: options.instances - 1 }, (_, i) =>
          startServiceProcess(env, log(i + 1)),
        ),
      )),
    );
    console.log(`the instances' logs: ${logs}`);
    console.log(`${services.length} instances serving`);
    const fleet = new Fleet(services.map((service) => service.baseUrl));
    const botToken = await reportBotGuilds(fleet, emulator, world);
    console.log(`the bot's ${world.guildIds.length} guilds reported through the membership feed`);

    // Returning users come back with the session of an earlier visit. Those visits' logins met
    // the token endpoint's bucket at the time; here the emulator's clock moves on a second for
    // each bucket's worth, so that hours of earlier visits take seconds of the emulator's windows
    // and leave none open. The service's own limiter holds them to the endpoint's rate in real
    // time, so they are made while the bot's guild states are fed (neither waits on the other).
    const returning = new Map<string, string>();
    const scoped = new Set(
      world.users.filter((_, i) => world.draws[i].scope < spec.memberScopePercent / 100),
    );
    const keptStarted = performance.now();
    const comingBack = world.users.filter(
      (_, i) => world.draws[i].returning < spec.returningPercent / 100,
    );
    const attackerTokens: string[] = [];
    const keptSessions = (async (): Promise<number> => {
      const perWindow = TOKEN_ENDPOINT_PER_SECOND - 1;
      for (let i = 0; i < comingBack.length; i += perWindow) {
        const group = comingBack.slice(i, i + perWindow);
        const tokens = await Promise.all(
          group.map((user) =>
            login(fleet, emulator, user, scopesOf(user, scoped), EARLIER_VISIT_RETRIES),
          ),
        );
        group.forEach((user, k) => returning.set(user, tokens[k]));
        earlierVisitsMs += 1_000;
      }
      for (const attacker of world.attackers) {
        attackerTokens.push(
          await login(fleet, emulator, attacker, undefined, EARLIER_VISIT_RETRIES),
        );
        earlierVisitsMs += 1_000 / TOKEN_ENDPOINT_PER_SECOND;
      }
      return (performance.now() - keptStarted) / 1000;
    })();
    // Awaited after the feed; a failure meanwhile waits for that.
    keptSessions.catch(() => undefined);

    // The shards connected to the gateway: every one, but while a restart's shards identify.
    const connected = new Set(world.shardGuilds.keys());
    if (spec.guildState === 'on') {
      const forwarding = await feedGuildStates(fleet, emulator, world, botToken);
      bot = forwarding;
      stopForwarding = emulator.state.onGuildState((change) =>
        forward(forwarding, world, connected, change),
      );
    }
    const keptSessionsSeconds = await keptSessions;
    if (returning.size > 0) {
      console.log(
        `${returning.size} sessions of earlier visits made in ${keptSessionsSeconds.toFixed(0)} s`,
      );
      // Past the platform cache's lifetime: what those logins read is not what the users find.
      await sleep(6_000);
    }

    // From here on, every platform answer takes the latency.
    if (options.latencyMs > 0) {
      emulator.intercept(async (_route, _reply, signal) => {
        await sleep(options.latencyMs, undefined, { signal });
      });
    }
    const firstRequest = emulator.requests.length;
    const invalidBefore = emulator.invalidAnswers();
    const batchesBefore = bot ? { ...bot.counts } : null;
    const started = performance.now();
    // The bot keeps reporting while it runs, so the service keeps trusting its feed.
    const heartbeat = setInterval(() => {
      for (const shard of connected) {
        void fleet
          .request('POST', `/internal/shards/${shard}/guild-events`, {
            token: botToken,
            body: { events: [] },
          })
          .then((answer) => {
            if (answer.status !== 200) {
              console.error(`the bot's heartbeat answered ${answer.status}`);
            }
          });
      }
    }, BOT_HEARTBEAT_MS);
    // The platform's guilds change while the users run; with the feed, the bot reports it.
    let changes = 0;
    const changeRandom = sequence(0x7f4a7c15);
    const changing =
      options.changesPerS > 0
        ? setInterval(() => {
            changeGuild(emulator, world, changes++, changeRandom);
          }, 1000 / options.changesPerS)
        : null;
    const attack = startAttack(fleet, world, options, attackerTokens);
    const restarted = bot;
    const restart =
      options.restartAt === null
        ? null
        : sleep(started + options.restartAt * 1000 - performance.now()).then(() =>
            restartBot(
              fleet,
              emulator,
              world,
              botToken,
              restarted,
              connected,
              () => Date.now() + earlierVisitsMs,
            ),
          );
    // Awaited after the users; a failure meanwhile waits for that.
    void restart?.catch(() => undefined);
    let users: { results: StepResult[]; heldByReady: number };
    let restartReport: RestartReport | null = null;
    try {
      users = await simulateUsers(fleet, emulator, world, options, returning, scoped);
      restartReport = await restart;
    } finally {
      clearInterval(heartbeat);
      if (changing) clearInterval(changing);
    }
    const attackReport = await attack.stop();
    const durationS = (performance.now() - started) / 1000;
    const requests = emulator.requests.slice(firstRequest);
    const invalidAnswers = emulator.invalidAnswers() - invalidBefore;
    let feed: FeedReport | null = null;
    if (restarted && batchesBefore) {
      await restarted.reporter
        .flush()
        .catch((error: unknown) => restarted.errors.push(String(error)));
      const status = await guildStateStatus(fleet, botToken);
      feed = {
        fedGuilds: restarted.fedGuilds,
        fedBytes: restarted.fedBytes,
        fedSeconds: restarted.fedSeconds,
        batches: restarted.counts.batches - batchesBefore.batches,
        failedBatches: restarted.counts.failed - batchesBefore.failed,
        reporterErrors: restarted.errors.slice(restarted.errorsBeforeRun),
        changes,
        live: status.live,
        guilds: status.guilds,
        behind: status.behind,
      };
    }
    return {
      ...spec,
      ...users,
      attack: attackReport,
      requests,
      invalidAnswers,
      durationS,
      returningUsers: returning.size,
      keptSessionsSeconds,
      scopedUsers: scoped.size,
      feed,
      restart: restartReport,
    };
  } finally {
    stopForwarding();
    await bot?.reporter.close().catch(() => undefined);
    await Promise.all(services.map((service) => stopServiceProcess(service.process)));
    await proxyServer?.close();
    await emulator.close();
    await database.drop();
  }
}

/** `@discordjs/proxy` as its container runs it, in front of the emulator. */
async function startProxy(apiUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const rest = new REST({ api: apiUrl, rejectOnRateLimit: () => true, retries: 0 });
  const handle = proxyRequests(rest);
  const server: Server = createServer((request, response) => {
    Promise.resolve(handle(request, response)).catch(() => {
      if (!response.headersSent) response.statusCode = 502;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The instances behind a load balancer that hands each request to the next one. */
class Fleet {
  private next = 0;

  constructor(readonly baseUrls: string[]) {}

  /** The instance the next request goes to. */
  nextBaseUrl(): string {
    return this.baseUrls[this.next++ % this.baseUrls.length];
  }

  async request(
    method: string,
    path: string,
    options: { token?: string; body?: object; signal?: AbortSignal; from?: string } = {},
  ): Promise<Response> {
    return fetch(`${this.nextBaseUrl()}${path}`, {
      method,
      headers: {
        ...(options.body ? { 'Content-Type': 'application/json' } : {}),
        ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        ...(options.from ? { 'X-Forwarded-For': options.from } : {}),
      },
      body: options.body ? JSON.stringify(options.body) : undefined,
      signal: options.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  }
}

/** The scopes of a user's login: with `guilds.members.read` when its draw says so. */
function scopesOf(user: string, scoped: ReadonlySet<string>): string[] {
  return scoped.has(user) ? ['identify', 'guilds', MEMBER_READ_SCOPE] : ['identify', 'guilds'];
}

/**
 * Where a user logs in from: an address of their own (the service's per-address budgets count
 * each), as the load balancer names it.
 */
function addressOf(userId: string): string {
  const n = Number(BigInt(userId) % 1_000_000n);
  return `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
}

async function login(
  fleet: Fleet,
  emulator: PlatformEmulator,
  userId: string,
  scopes?: string[],
  /**
   * Before the run (an earlier visit): a 429 is retried after its `Retry-After`, up to this many
   * times.
   */
  retries = 0,
): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const code = emulator.issueCode({ userId, scopes, redirectUri: REDIRECT });
    const response = await fleet.request('POST', '/oauth2', {
      from: addressOf(userId),
      body: { code, redirect_uri: REDIRECT },
    });
    const text = await response.text();
    if (response.status === 200) return (JSON.parse(text) as { token: string }).token;
    if (response.status !== 429 || attempt >= retries) {
      throw new Error(`login answered ${response.status}: ${text}`);
    }
    await sleep(Number(response.headers.get('Retry-After') ?? '1') * 1000);
  }
}

/**
 * The bot reports its guilds at connect, each shard's snapshot in parts; returns the API token it
 * reports with.
 */
async function reportBotGuilds(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
): Promise<string> {
  const token = await login(fleet, emulator, world.operator);
  const created = await fleet.request('POST', '/sessions', {
    token,
    body: { name: 'fleet bot', type: 'api', expiry: 3600 },
  });
  if (created.status !== 201) throw new Error(`POST /sessions answered ${created.status}`);
  const apiToken = ((await created.json()) as { token: string }).token;
  for (const shard of world.shardGuilds.keys())
    await reportShardGuilds(fleet, apiToken, world, shard);
  return apiToken;
}

/** One shard's snapshot of its guilds, in parts, as its gateway session's READY lists them. */
async function reportShardGuilds(
  fleet: Fleet,
  apiToken: string,
  world: World,
  shard: number,
): Promise<void> {
  const ids = world.shardGuilds[shard];
  const snapshotAt = new Date().toISOString();
  for (let part = 0; part < ids.length; part += FEED_PART) {
    const answer = await fleet.request('PUT', `/internal/shards/${shard}/guilds`, {
      token: apiToken,
      body: {
        shard_count: world.shardCount,
        snapshot_at: snapshotAt,
        total: ids.length,
        guild_ids: ids.slice(part, part + FEED_PART),
      },
    });
    if (answer.status !== 200) {
      throw new Error(`the membership feed answered ${answer.status}: ${await answer.text()}`);
    }
  }
}

// --- The bot's guild-state feed -------------------------------------------------------------------

interface SimulatedBot {
  /** The bot process's reporter: a new one (new streams) after a restart. */
  reporter: GuildStateReporter;
  counts: BatchCounts;
  errors: string[];
  errorsBeforeRun: number;
  fedGuilds: number;
  fedBytes: number;
  fedSeconds: number;
}

/** Batches the bot's reporters sent (to the instances in turn), those not answered 200, bytes. */
interface BatchCounts {
  batches: number;
  failed: number;
  bytes: number;
}

/**
 * A bot process's guild-state reporter, through `createGuildStateReporter` as the discord.js wiring
 * makes it: each shard's first report starts a new stream.
 */
function startReporter(
  fleet: Fleet,
  emulator: PlatformEmulator,
  apiToken: string,
  counts: BatchCounts,
  errors: string[],
): GuildStateReporter {
  return createGuildStateReporter({
    baseUrl: fleet.baseUrls[0],
    token: apiToken,
    // Through the load balancer: each batch to the next instance.
    fetch: async (url, init) => {
      const path = url.slice(fleet.baseUrls[0].length);
      if (typeof init.body === 'string') counts.bytes += Buffer.byteLength(init.body);
      counts.batches += 1;
      const response = await fetch(`${fleet.nextBaseUrl()}${path}`, init);
      if (response.status !== 200) counts.failed += 1;
      return response;
    },
    fullState: (guildId) => emulator.state.gatewayGuildState(guildId),
    onError: (error: ReporterError) => {
      errors.push(`${error.kind}: ${error.message}`);
      if (errors.length <= 5) console.error(`[bot-reporter] ${error.kind}: ${error.message}`);
    },
  });
}

/**
 * The bot's gateway brings each guild's GUILD_CREATE at connect; it reports each whole, and the run
 * waits until every instance holds every guild live.
 */
async function feedGuildStates(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  apiToken: string,
): Promise<SimulatedBot> {
  const counts: BatchCounts = { batches: 0, failed: 0, bytes: 0 };
  const errors: string[] = [];
  const reporter = startReporter(fleet, emulator, apiToken, counts, errors);
  const started = performance.now();
  const ids = world.guildIds;
  // As the shards connect, MAX_CONCURRENCY at a time, each with all of its guilds: whole batches,
  // every shard's one at a time (the reporter's way), with nothing held back for the pace.
  for (let first = 0; first < world.shardCount; first += MAX_CONCURRENCY) {
    for (let shard = first; shard < Math.min(first + MAX_CONCURRENCY, world.shardCount); shard++) {
      for (const [n, id] of world.shardGuilds[shard].entries()) {
        reporter.guildCreate(shard, emulator.state.gatewayGuildState(id));
        if (n % GUILD_CREATES_IN_A_ROW === GUILD_CREATES_IN_A_ROW - 1) await sleep(0);
      }
    }
    await reporter.flush();
  }
  const sentBytes = counts.bytes;
  const late = await untilEveryInstance(
    fleet,
    apiToken,
    (status) => status.live === ids.length,
    120_000,
  );
  if (late) {
    throw new Error(
      `${late.baseUrl} holds ${late.status.live} of ${ids.length} guild states live: ${JSON.stringify(late.status.behind)}`,
    );
  }
  const fedSeconds = (performance.now() - started) / 1000;
  console.log(
    `the bot's ${ids.length} guild states fed (${(sentBytes / 2 ** 20).toFixed(1)} MiB in ${counts.batches} batches) and live on every instance in ${fedSeconds.toFixed(1)} s`,
  );
  return {
    reporter,
    counts,
    errors,
    errorsBeforeRun: errors.length,
    fedGuilds: ids.length,
    fedBytes: sentBytes,
    fedSeconds,
  };
}

/**
 * The bot restarts (a deploy): the old process sends what it had queued and stops; the new one's
 * shards identify MAX_CONCURRENCY at a time, every IDENTIFY_EVERY_MS, each sending its membership
 * snapshot (READY's guild list) and, on a new guild-state stream, every guild's GUILD_CREATE as the
 * platform holds it then. Resolves once every instance holds every guild live on the new streams
 * (or RESTART_WAIT_MS passed); without the feed, once every shard's snapshot was taken.
 */
async function restartBot(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  apiToken: string,
  bot: SimulatedBot | null,
  connected: Set<number>,
  emulatorNow: () => number,
): Promise<RestartReport> {
  const from = performance.now();
  const fromAt = emulatorNow();
  console.log(
    `the bot restarts: ${world.shardCount} shards identify, ${MAX_CONCURRENCY} every ${IDENTIFY_EVERY_MS / 1000} s`,
  );
  // Each shard's stream before the restart: the new one must have replaced it everywhere.
  const replaced = bot
    ? new Map(
        (await guildStateStatus(fleet, apiToken)).shards.map((s) => [s.shard_id, s.stream_id]),
      )
    : new Map<number, string | null>();
  connected.clear();
  if (bot) {
    await bot.reporter.close().catch((error: unknown) => bot.errors.push(String(error)));
    bot.reporter = startReporter(fleet, emulator, apiToken, bot.counts, bot.errors);
  }
  const before = bot ? { ...bot.counts, errors: bot.errors.length } : null;
  const resentAt: number[] = [];
  const sending: Promise<void>[] = [];
  for (let first = 0; first < world.shardCount; first += MAX_CONCURRENCY) {
    const due = from + (first / MAX_CONCURRENCY) * IDENTIFY_EVERY_MS - performance.now();
    if (due > 0) await sleep(due);
    for (let shard = first; shard < Math.min(first + MAX_CONCURRENCY, world.shardCount); shard++) {
      connected.add(shard);
      sending.push(reportShardGuilds(fleet, apiToken, world, shard));
      for (const [n, id] of world.shardGuilds[shard].entries()) {
        bot?.reporter.guildCreate(shard, emulator.state.gatewayGuildState(id));
        // The bench's own process makes the GUILD_CREATEs, beside the emulator and the users: it
        // hands the event loop back often, so that the platform's answers are not held up.
        if (n % GUILD_CREATES_IN_A_ROW === GUILD_CREATES_IN_A_ROW - 1) await sleep(1);
      }
      sending.push(
        (async () => {
          while (bot && bot.reporter.pending(shard) > 0) await sleep(100);
          resentAt[shard] = performance.now();
        })(),
      );
    }
  }
  const identifiedSeconds = (performance.now() - from) / 1000;
  await Promise.all(sending);
  let late: Awaited<ReturnType<typeof untilEveryInstance>> = undefined;
  if (bot) {
    await bot.reporter.flush().catch((error: unknown) => bot.errors.push(String(error)));
    late = await untilEveryInstance(
      fleet,
      apiToken,
      (status) =>
        status.live === status.guilds &&
        status.shards.every(
          (s) => s.restart_guilds === 0 && s.stream_id !== replaced.get(s.shard_id),
        ),
      RESTART_WAIT_MS - (performance.now() - from),
    );
  }
  const until = performance.now();
  const liveSeconds = late ? null : (until - from) / 1000;
  console.log(
    `the bot's shards identified in ${identifiedSeconds.toFixed(1)} s; ${liveSeconds === null ? `guilds still behind after ${RESTART_WAIT_MS / 1000} s` : `every guild live again in ${liveSeconds.toFixed(1)} s`}`,
  );
  return {
    shards: world.shardCount,
    guilds: bot ? world.guildIds.length : 0,
    bytes: bot && before ? bot.counts.bytes - before.bytes : 0,
    identifiedSeconds,
    liveSeconds,
    from,
    until,
    fromAt,
    untilAt: emulatorNow(),
    resentAt,
    failedBatches: bot && before ? bot.counts.failed - before.failed : 0,
    reporterErrors: bot && before ? bot.errors.slice(before.errors) : [],
    behind: late?.status.behind ?? {},
  };
}

/** `GET /internal/guild-state`, in part. */
interface GuildStateStatus {
  guilds: number;
  live: number;
  behind: Record<string, number>;
  shards: { shard_id: number; stream_id: string | null; restart_guilds: number }[];
}

async function guildStateStatus(
  fleet: Fleet,
  token: string,
  baseUrl = fleet.nextBaseUrl(),
): Promise<GuildStateStatus> {
  const response = await fetch(`${baseUrl}/internal/guild-state`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (response.status !== 200) {
    throw new Error(`GET /internal/guild-state answered ${response.status}`);
  }
  return (await response.json()) as GuildStateStatus;
}

/**
 * Asks each instance in turn until `done` holds for its guild-state status; undefined once every
 * instance's did, else the first instance whose did not within `withinMs`, with its last status.
 */
async function untilEveryInstance(
  fleet: Fleet,
  token: string,
  done: (status: GuildStateStatus) => boolean,
  withinMs: number,
): Promise<{ baseUrl: string; status: GuildStateStatus } | undefined> {
  const deadline = performance.now() + withinMs;
  for (const baseUrl of fleet.baseUrls) {
    for (;;) {
      const status = await guildStateStatus(fleet, token, baseUrl);
      if (done(status)) break;
      if (performance.now() > deadline) return { baseUrl, status };
      await sleep(250);
    }
  }
  return undefined;
}

/**
 * What the bot's gateway announces, reported as the discord.js wiring reports it; a shard not
 * connected (while a restart's shards identify) hears nothing, and its GUILD_CREATE brings the
 * guild as it is by then.
 */
function forward(
  bot: SimulatedBot,
  world: World,
  connected: ReadonlySet<number>,
  change: GuildStateChange,
): void {
  const r = bot.reporter;
  const id = change.guild_id;
  const shard = shardOfGuild(id, world.shardCount);
  if (!connected.has(shard)) return;
  switch (change.type) {
    case 'guild_create':
      return r.guildCreate(shard, change.guild);
    case 'guild_update':
      return r.guildUpdate(shard, id, change.guild);
    case 'guild_delete':
      return r.guildDelete(shard, id, change.unavailable);
    case 'role_upsert':
      return r.roleUpsert(shard, id, change.role);
    case 'role_delete':
      return r.roleDelete(shard, id, change.role_id);
    case 'channel_upsert':
      return r.channelUpsert(shard, id, change.channel);
    case 'channel_delete':
      return r.channelDelete(shard, id, change.channel_id);
    case 'thread_upsert':
      return r.threadUpsert(shard, id, change.thread);
    case 'thread_delete':
      return r.threadDelete(shard, id, change.thread_id);
    case 'thread_list_sync':
      return r.threadListSync(shard, id, change.threads, change.channel_ids);
    case 'bot_member_update':
      return r.botMemberUpdate(shard, id, change.member);
  }
}

/**
 * One change the platform makes to one of the bot's guilds, in turn: #general renamed, a thread
 * made (or one made earlier unarchived), a thread archived, a role's permissions, the guild renamed.
 */
function changeGuild(
  emulator: PlatformEmulator,
  world: World,
  n: number,
  random: (n: number) => number,
): void {
  const guildId = world.guildIds[random(world.guildIds.length)];
  const guild = emulator.state.guild(guildId);
  if (!guild) return;
  const general = (BigInt(guildId) + 10n).toString();
  switch (n % 5) {
    case 0: {
      const channel = guild.channels.find((c) => c.id === general);
      if (channel) emulator.state.upsertChannel(guildId, { ...channel, name: `general-${n}` });
      return;
    }
    case 1:
      emulator.state.upsertChannel(guildId, {
        id: entityId(guildIndexOf(guildId), RUN_THREAD_IDS + (Math.floor(n / 5) % 50)),
        type: ChannelType.PublicThread,
        name: `thread of the run ${n}`,
        position: 0,
        parent_id: general,
        archived: false,
      });
      return;
    case 2: {
      const thread = guild.channels.find((c) => isThread(c) && !c.archived);
      if (thread) emulator.state.upsertChannel(guildId, { ...thread, archived: true });
      return;
    }
    case 3: {
      // A role of the guild's own (not @everyone, the bot's, Member or Staff).
      const role = guild.roles.find((r) => r.id === entityId(guildIndexOf(guildId), ROLE_IDS + 1));
      if (role) {
        const permissions = (BigInt(role.permissions) ^ P.ManageMessages).toString();
        emulator.state.upsertRole(guildId, { ...role, permissions });
      }
      return;
    }
    default:
      emulator.state.updateGuild(guildId, { name: `guild ${guildId.slice(-7)} (${n})` });
  }
}

// --- The attackers -------------------------------------------------------------------------------

/**
 * Starts the attackers: each account asks a cold guild of its own for its revisions every
 * ATTACK_EVERY_MS, and every CODE_BURST_EVERY_MS fresh addresses send ten made-up codes each at
 * once. `stop` ends them and waits for their answers.
 */
function startAttack(
  fleet: Fleet,
  world: World,
  options: Options,
  tokens: readonly string[],
): { stop(): Promise<AttackReport> } {
  const report: AttackReport = {
    guildRequests: new Map(),
    guildRefusalMs: [],
    codes: new Map(),
    codeRefusalMs: [],
  };
  const pending = new Set<Promise<void>>();
  const send = (
    counts: Map<number, number>,
    refusalMs: number[],
    request: () => Promise<Response>,
  ): void => {
    const started = performance.now();
    const sent = request()
      .then(async (response) => {
        await response.arrayBuffer();
        counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
        if (response.status === 429) refusalMs.push(performance.now() - started);
      })
      .catch(() => void counts.set(0, (counts.get(0) ?? 0) + 1))
      .finally(() => pending.delete(sent));
    pending.add(sent);
  };
  const next = world.attackers.map(() => 0);
  const timers = tokens.map((token, k) =>
    setInterval(() => {
      const guilds = world.attackedGuilds.get(world.attackers[k]) ?? [];
      if (guilds.length === 0) return;
      const guild = guilds[next[k]++ % guilds.length];
      send(report.guildRequests, report.guildRefusalMs, () =>
        fleet.request('GET', `/guilds/${guild}/settings/revisions`, { token }),
      );
    }, ATTACK_EVERY_MS),
  );
  let burst = 0;
  if (options.codeAddresses > 0) {
    timers.push(
      setInterval(() => {
        for (let a = 0; a < options.codeAddresses; a++) {
          // A fresh address each burst (an address sends once a minute at most: its budget).
          const n = burst * options.codeAddresses + a;
          const from = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
          for (let c = 0; c < CODES_PER_ADDRESS; c++) {
            send(report.codes, report.codeRefusalMs, () =>
              fleet.request('POST', '/oauth2', {
                from,
                body: { code: `made-up-${n}-${c}`, redirect_uri: REDIRECT },
              }),
            );
          }
        }
        burst += 1;
      }, CODE_BURST_EVERY_MS),
    );
  }
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.all(pending);
      return report;
    },
  };
}

// --- The users -----------------------------------------------------------------------------------

async function simulateUsers(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  options: Options,
  returning: ReadonlyMap<string, string>,
  scoped: ReadonlySet<string>,
): Promise<{ results: StepResult[]; heldByReady: number }> {
  const results: StepResult[] = [];
  const heldByReady = { count: 0 };
  /** When each guild was last opened, as a cold open (performance.now()). */
  const opened = new Map<string, number>();
  const gapMs = (options.durationS * 1000) / world.users.length;
  const journeys: Promise<void>[] = [];
  let done = 0;
  const progress = setInterval(() => {
    const failed = results.filter((x) => x.error !== null).length;
    console.log(
      `${journeys.length} users started, ${done} done, ${results.length} steps, ${failed} failed`,
    );
  }, 10_000);
  const started = performance.now();
  try {
    for (const [i, user] of world.users.entries()) {
      const session = returning.get(user);
      journeys.push(
        journey(
          fleet,
          emulator,
          world,
          user,
          i,
          session,
          scoped,
          opened,
          results,
          heldByReady,
        ).finally(() => (done += 1)),
      );
      // Evenly over the run, by the clock: a late start is made up by the next ones.
      const due = started + (i + 1) * gapMs - performance.now();
      if (due > 0) await sleep(due);
    }
    await Promise.all(journeys);
  } finally {
    clearInterval(progress);
  }
  return { results, heldByReady: heldByReady.count };
}

/** One user's visit to the dashboard; a step that fails ends it, as it would for a person. */
async function journey(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  user: string,
  index: number,
  /** A returning user's session, kept from an earlier visit; none: the user logs in. */
  session: string | undefined,
  scoped: ReadonlySet<string>,
  opened: Map<string, number>,
  results: StepResult[],
  /** Changes the stream's `ready` already held (see `follow`). */
  heldByReady: { count: number },
): Promise<void> {
  const step = async <T>(name: Step, action: () => Promise<T>, guild?: string): Promise<T> => {
    const at = performance.now();
    try {
      const value = await action();
      results.push({ step: name, at, ms: performance.now() - at, guild, error: null });
      return value;
    } catch (error) {
      results.push({ step: name, at, ms: performance.now() - at, guild, error: String(error) });
      throw error;
    }
  };
  const call = async (
    method: string,
    path: string,
    token: string,
    expect: number[],
    body?: object,
  ): Promise<string> => {
    const response = await fleet.request(method, path, { token, body });
    const text = await response.text();
    if (!expect.includes(response.status)) {
      throw new Error(
        `${method} ${path.replace(/\d{17,20}/g, '{id}')} answered ${response.status}: ${text.slice(0, 160)}`,
      );
    }
    return text;
  };
  const mine = world.guildsOf.get(user) ?? [];
  const owned = world.ownedBy.get(user);
  try {
    const token =
      session ?? (await step('login', () => login(fleet, emulator, user, scopesOf(user, scoped))));
    await step('list guilds', () => call('GET', '/users/@me/guilds', token, [200]));
    // Cold: a guild of theirs nobody opened (their own first). Warm: one of theirs someone opened
    // within the platform cache's lifetime, or the same guild again.
    const cold = mine.find((id) => !opened.has(id)) ?? mine[0];
    opened.set(cold, performance.now());
    await step(
      'open cold guild',
      () => call('GET', `/users/@me/guilds/${cold}`, token, [200]),
      cold,
    );
    const recent = (id: string): boolean =>
      id !== cold && performance.now() - (opened.get(id) ?? -Infinity) < WARM_WITHIN_MS;
    const warm = mine.find(recent) ?? cold;
    await step(
      'open warm guild',
      () => call('GET', `/users/@me/guilds/${warm}`, token, [200]),
      warm,
    );
    const invented = (INVENTED_BASE + BigInt(index)).toString();
    await step('open invented id', () =>
      call('GET', `/users/@me/guilds/${invented}`, token, [404]),
    );
    if (!owned) return;
    const stream = await step('follow events', () => follow(fleet, owned, token));
    try {
      const settings = (operation: string, fields: object): Promise<string> =>
        call('POST', `/guilds/${owned}/settings`, token, [200], {
          setting: 'guildroles',
          operation,
          fields,
        });
      await step('view settings', () => settings('View', {}));
      const role = memberRole(owned);
      await step('change a setting', () =>
        settings('Create', { role_id: role, perms: ['guildroles.view'], index: 1 }),
      );
      // The guild's first revision: only its owner changes it, once.
      const seen = await step('see the change', () => stream.waitFor(role, 1));
      if (seen === 'ready') heldByReady.count += 1;
    } finally {
      stream.close();
    }
  } catch {
    // Recorded by its step.
  }
}

/** A guild's event stream, read as it arrives. */
async function follow(
  fleet: Fleet,
  guildId: string,
  token: string,
): Promise<{ waitFor(text: string, revision: number): Promise<'event' | 'ready'>; close(): void }> {
  const controller = new AbortController();
  const response = await fleet.request('GET', `/guilds/${guildId}/events`, {
    token,
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) {
    controller.abort();
    throw new Error(`GET /guilds/{id}/events answered ${response.status}`);
  }
  let received = '';
  const waiting: { wake: (() => void) | null } = { wake: null };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        received += value;
        waiting.wake?.();
      }
    } catch {
      // Closed.
    }
  })();
  return {
    async waitFor(text: string, revision: number): Promise<'event' | 'ready'> {
      const deadline = performance.now() + STREAM_WAIT_MS;
      for (;;) {
        if (received.includes(text)) return 'event';
        // The stream's position, read after the change committed: `ready` holds it, and no event
        // follows for it (a client reading the settings after `ready` has it).
        const ready = /event: ready\nid: (\d+)/.exec(received);
        if (ready && Number(ready[1]) >= revision) return 'ready';
        const left = deadline - performance.now();
        if (left <= 0)
          throw new Error(`the change did not reach the event stream within ${STREAM_WAIT_MS} ms`);
        await Promise.race([new Promise<void>((resolve) => (waiting.wake = resolve)), sleep(left)]);
      }
    },
    close: () => controller.abort(),
  };
}

// --- The report ----------------------------------------------------------------------------------

function report(options: Options, world: World, reports: RunReport[]): string {
  const { small, medium, large } = world.sizes;
  const { roles, channels, threads } = world.entities;
  const feedRuns = [...new Set(reports.map((r) => r.guildState))];
  const feed =
    feedRuns.length > 1
      ? 'with and without the guild-state feed'
      : feedRuns[0] === 'on'
        ? 'guild state fed'
        : 'no guild state';
  const lines: string[] = [
    `## ${options.users} users over ${options.durationS} s, ${feed}${options.restartAt === null ? '' : `, ${options.guilds} guilds, the bot restarting at ${options.restartAt} s`}`,
    '',
    `\`${['npm run bench:fleet --', ...process.argv.slice(2)].join(' ')}\`, ${new Date().toISOString()}.`,
    '',
    `${options.instances} instances on PostgreSQL and Redis; the emulator with the platform's rate limits and ${options.latencyMs} ms per answer; ${options.guilds} guilds known through the membership feed (${small} small, ${medium} medium, ${large} large: ${roles} roles, ${channels} channels and ${threads} active threads in all); ${options.users} users started over ${options.durationS} s; the platform changes ${options.changesPerS} guilds a second while they run.${options.restartAt === null ? '' : ` The bot (${world.shardCount} shards) restarts ${options.restartAt} s into the users' part: every shard starts a new membership snapshot and guild-state stream and re-sends its guilds, ${MAX_CONCURRENCY} shards identifying every ${IDENTIFY_EVERY_MS / 1000} s; the window is from the restart until every instance holds every guild live on a new stream.`}`,
    '',
    '| | ' + reports.map(label).join(' | ') + ' |',
    '|---|' + reports.map(() => '---:|').join(''),
  ];
  const row = (name: string, value: (r: RunReport) => string): void => {
    lines.push(`| ${name} | ${reports.map(value).join(' | ')} |`);
  };
  const actions = (r: RunReport): number => r.results.filter((x) => x.error === null).length;
  const limited = (r: RunReport): EmulatedRequest[] => r.requests.filter((x) => x.status === 429);
  const bot = (r: RunReport): EmulatedRequest[] => r.requests.filter((x) => x.auth === 'bot');
  const tokenEndpoint = (r: RunReport): EmulatedRequest[] =>
    r.requests.filter((x) => x.route === 'POST /oauth2/token');
  const rate = (seconds: number, requests: EmulatedRequest[]): string => {
    const perSecond = perSecondOf(requests);
    return `${(requests.length / seconds).toFixed(1)} / ${Math.max(0, ...perSecond)}`;
  };
  row(
    'users: logging in during the run / back with a session of an earlier visit',
    (r) => `${options.users - r.returningUsers} / ${r.returningUsers}`,
  );
  row(
    'users whose login granted guilds.members.read',
    (r) => `${r.scopedUsers} (${((100 * r.scopedUsers) / options.users).toFixed(0)}%)`,
  );
  row('platform calls', (r) => String(r.requests.length));
  row('bot-token calls a second: mean / busiest second (the limit: 50)', (r) =>
    rate(r.durationS, bot(r)),
  );
  row(
    `token endpoint calls a second: mean / busiest second (its limit: ${TOKEN_ENDPOINT_PER_SECOND})`,
    (r) => rate(r.durationS, tokenEndpoint(r)),
  );
  row('platform calls per user action', (r) =>
    (r.requests.length / Math.max(1, actions(r))).toFixed(2),
  );
  row('429 answers, global', (r) => String(limited(r).filter(isGlobal).length));
  row('429 answers, per route', (r) => String(limited(r).filter((x) => !isGlobal(x)).length));
  row('invalid answers the platform counted (it bans at 10,000 in 10 min)', (r) =>
    String(r.invalidAnswers),
  );
  row('errors users saw', (r) => String(r.results.filter((x) => x.error !== null).length));
  row(
    `attackers' cold-guild requests (${options.attackers} accounts): sent / 403 / 429 / other`,
    (r) => statuses(r.attack.guildRequests, [403, 429]),
  );
  row("attackers' cold-guild requests refused (429): p50 / p99 ms", (r) =>
    percentiles(r.attack.guildRefusalMs),
  );
  row(
    `made-up codes (${options.codeAddresses} fresh addresses every ${CODE_BURST_EVERY_MS / 1000} s, ${CODES_PER_ADDRESS} each): sent / 400 / 429 / other`,
    (r) => statuses(r.attack.codes, [400, 429]),
  );
  row('made-up codes refused (429): p50 / p99 ms', (r) => percentiles(r.attack.codeRefusalMs));
  row("see the change: held by the stream's `ready` rather than sent as an event", (r) =>
    String(r.heldByReady),
  );
  row('run time', (r) => `${r.durationS.toFixed(0)} s`);
  for (const name of STEPS) {
    row(`${name}: p50 / p99 ms`, (r) => {
      const times = r.results.filter((x) => x.step === name && x.error === null).map((x) => x.ms);
      return times.length === 0
        ? '–'
        : `${percentile(times, 50).toFixed(0)} / ${percentile(times, 99).toFixed(0)}`;
    });
  }
  row('open cold guild: p99 in platform round trips', (r) => {
    const times = r.results.filter((x) => x.step === 'open cold guild' && x.error === null);
    return options.latencyMs === 0 || times.length === 0
      ? '–'
      : (
          percentile(
            times.map((x) => x.ms),
            99,
          ) / options.latencyMs
        ).toFixed(1);
  });
  row('guild states fed before the run: guilds, MiB, seconds until live everywhere', (r) =>
    r.feed
      ? `${r.feed.fedGuilds}, ${(r.feed.fedBytes / 2 ** 20).toFixed(1)}, ${r.feed.fedSeconds.toFixed(0)}`
      : '–',
  );
  row('guild-state batches during the run (changes made) / not answered 200', (r) =>
    r.feed ? `${r.feed.batches} (${r.feed.changes}) / ${r.feed.failedBatches}` : '–',
  );
  row('guild states live at the end / behind / reporter errors', (r) => {
    if (!r.feed) return '–';
    const behind = Object.values(r.feed.behind).reduce((sum, n) => sum + n, 0);
    return `${r.feed.live} of ${r.feed.guilds} / ${behind} / ${r.feed.reporterErrors.length}`;
  });
  row('sessions of earlier visits: made before the run in', (r) =>
    r.returningUsers > 0 ? `${r.keptSessionsSeconds.toFixed(0)} s` : '–',
  );
  if (options.restartAt !== null) {
    const during = (
      name: string,
      value: (restart: RestartReport, r: RunReport, inWindow: EmulatedRequest[]) => string,
    ): void =>
      row(name, (r) => {
        const x = r.restart;
        if (!x) return '–';
        return value(
          x,
          r,
          r.requests.filter((q) => q.at >= x.fromAt && q.at <= x.untilAt),
        );
      });
    const steps = (x: RestartReport, r: RunReport): StepResult[] =>
      r.results.filter((s) => s.at >= x.from && s.at <= x.until);
    during(
      `bot restart at ${options.restartAt} s: shards (${MAX_CONCURRENCY} identify every ${IDENTIFY_EVERY_MS / 1000} s) / seconds until the last identified`,
      (x) => `${x.shards} / ${x.identifiedSeconds.toFixed(0)}`,
    );
    during(
      'bot restart: guild states re-sent on new streams, MiB / batches not answered 200 / reporter errors',
      (x) =>
        x.guilds === 0
          ? '–'
          : `${x.guilds}, ${(x.bytes / 2 ** 20).toFixed(1)} / ${x.failedBatches} / ${x.reporterErrors.length}`,
    );
    during(
      'bot restart: seconds until every guild was live again on a new stream, on every instance (the window below)',
      (x) =>
        x.liveSeconds === null
          ? `not within ${RESTART_WAIT_MS / 1000} (behind: ${JSON.stringify(x.behind)})`
          : x.liveSeconds.toFixed(0),
    );
    during(
      "guild opens in the window: before their shard's new stream had re-sent them (the last state serving) / after; of each, guilds read from the platform in the window",
      (x, r, inWindow) => {
        const read = new Set(
          inWindow
            .filter((q) => q.auth === 'bot' && q.route === 'GET /guilds/:guild_id')
            .map((q) => /\/guilds\/(\d+)/.exec(q.url)?.[1]),
        );
        const opens = steps(x, r).filter((s) => s.guild !== undefined && s.error === null);
        const before = opens.filter(
          (s) => !(x.resentAt[shardOfGuild(s.guild ?? '', world.shardCount)] <= s.at),
        );
        const after = opens.filter((s) => !before.includes(s));
        const fromPlatform = (list: StepResult[]): number =>
          new Set(list.filter((s) => read.has(s.guild)).map((s) => s.guild)).size;
        return `${before.length} / ${after.length}; ${fromPlatform(before)} / ${fromPlatform(after)}`;
      },
    );
    during('open cold guild in the window: p50 / p99 ms', (x, r) =>
      percentiles(
        steps(x, r)
          .filter((s) => s.step === 'open cold guild' && s.error === null)
          .map((s) => s.ms),
      ),
    );
    during(
      'bot-token calls a second in the window: mean / busiest second (the limit: 50)',
      (x, _r, inWindow) =>
        rate(
          (x.untilAt - x.fromAt) / 1000,
          inWindow.filter((q) => q.auth === 'bot'),
        ),
    );
    during(
      '429 answers in the window: global / per route',
      (_x, _r, inWindow) =>
        `${inWindow.filter((q) => q.status === 429 && isGlobal(q)).length} / ${inWindow.filter((q) => q.status === 429 && !isGlobal(q)).length}`,
    );
    during('errors users saw in the window', (x, r) =>
      String(steps(x, r).filter((s) => s.error !== null).length),
    );
  }
  lines.push('');
  for (const r of reports) {
    const run = label(r);
    lines.push(`Bot-token calls by route (${run}): ${byRoute(bot(r))}`, '');
    lines.push(
      `User-token calls by route (${run}): ${byRoute(r.requests.filter((x) => x.auth === 'bearer'))}`,
      '',
    );
    lines.push(`429s (global and per route) by route (${run}): ${byRoute(limited(r))}`, '');
    if (r.feed) {
      const behind = Object.entries(r.feed.behind).filter(([, n]) => n > 0);
      lines.push(
        `Guild states behind at the end (${run}): ${behind.length === 0 ? 'none' : behind.map(([why, n]) => `${why} ${n}`).join(', ')}; reporter errors: ${r.feed.reporterErrors.length === 0 ? 'none' : r.feed.reporterErrors.slice(0, 5).join('; ')}`,
        '',
      );
    }
    const errors = new Map<string, number>();
    for (const result of r.results) {
      if (result.error === null) continue;
      // Errors differ by their error_id only: grouped without it.
      const key = `${result.step}: ${result.error.replace(/"error_id":"[^"]*"/, '"error_id":…')}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
    lines.push(
      errors.size === 0
        ? `Errors users saw (${run}): none.`
        : `Errors users saw (${run}):\n${[...errors].map(([error, n]) => `- ${n} × ${error}`).join('\n')}`,
      '',
    );
  }
  return lines.join('\n');
}

/** `sent / <each of shown> / other` of answers counted by status. */
function statuses(counts: ReadonlyMap<number, number>, shown: readonly number[]): string {
  const sent = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const other = sent - shown.reduce((sum, status) => sum + (counts.get(status) ?? 0), 0);
  return [sent, ...shown.map((status) => counts.get(status) ?? 0), other].join(' / ');
}

/** `p50 / p99` of times in ms. */
function percentiles(ms: readonly number[]): string {
  return ms.length === 0
    ? '–'
    : `${percentile([...ms], 50).toFixed(0)} / ${percentile([...ms], 99).toFixed(0)}`;
}

/** A 429 of the global limit. */
function isGlobal(request: EmulatedRequest): boolean {
  return request.scope === 'global';
}

/** Requests in each second from the first, as the platform counts its limits. */
function perSecondOf(requests: EmulatedRequest[]): number[] {
  if (requests.length === 0) return [];
  const start = requests[0].at;
  const seconds: number[] = [];
  for (const request of requests) {
    const second = Math.floor((request.at - start) / 1000);
    seconds[second] = (seconds[second] ?? 0) + 1;
  }
  return Array.from(seconds, (n) => n ?? 0);
}

function byRoute(requests: EmulatedRequest[]): string {
  const counts = new Map<string, number>();
  for (const request of requests) counts.set(request.route, (counts.get(request.route) ?? 0) + 1);
  return counts.size === 0 ? 'none' : [...counts].map(([route, n]) => `${route} ${n}`).join(', ');
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
