import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChannelType,
  OverwriteType,
  PermissionFlagsBits as P,
  type APIUser,
} from 'discord-api-types/v10';
import {
  guildStateHash,
  MAX_STATE_BATCH_BYTES,
  MAX_STATE_REPORTS,
  type GuildStateReceipt,
  type GuildStateReport,
} from 'clients/bot-reporter/src/guild-state';
import { DEMO_SEED, EVERYONE_DEFAULT } from 'src/platform/emulator/demo.seed';
import type { GuildStateChange } from 'src/platform/emulator/emulator.state';
import type { EmulatorSeed, SeedGuild, SeedMember } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator, type EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { databaseOption, integer } from './options';
import { ROOT, SERVICE_NODE_OPTIONS, stopServiceProcess } from './service-process';

/**
 * `npm run bench:flows`: what each step a dashboard takes costs in platform round trips, and with
 * which token.
 *
 * The built service runs as a child process in live mode against a platform emulator this process
 * starts, whose every answer waits a fixed latency (default 100 ms, about what Discord's REST API
 * takes from a data centre): the service's own work is then noise and a step's time is, to a good
 * approximation, its number of platform calls made one after another times the latency. Steps run
 * one at a time, so the emulator's request log tells exactly which calls each step made, when each
 * started and whether it carried the bot's token or the user's.
 *
 * Every repetition uses a user and guilds no earlier step touched, so a "cold" step is cold through
 * and through instead of relying on caches having expired; "warm" repeats the same request at once.
 * The first repetitions (--warmup) are run and discarded: they pay what a process pays once (the
 * bot's own user, compiling the code paths).
 *
 * The bot's guilds are reported through the membership feed (`PUT /internal/shards/{id}/guilds`)
 * first, with a root user's API token, as the bot would at connect. Then the steps run three ways
 * in one service process, each on guilds and users of its own, a repetition of each in turn:
 * (a) guilds whose state the guild-state feed never reported (the service reads them from the
 * platform, as with `GUILD_STATE_FEED=false`); (b) guilds whose full state was reported through
 * `POST /internal/shards/0/guild-state` (built from the emulator's gateway view), users logging in
 * with `guilds.members.read`; (c) the same, users logging in without that scope.
 *
 * Prints a Markdown report; with --write also writes it to bench/flows-results.md.
 */

const USAGE = `npm run bench:flows -- [options]

  --latency-ms=<ms>           platform latency added to every emulator answer (env FLOWS_LATENCY_MS; default 100)
  --reps=<n>                  measured repetitions of the whole flow, each way (env FLOWS_REPS; default 15)
  --warmup=<n>                repetitions run first and discarded, each way (env FLOWS_WARMUP; default 1)
  --platform-cache-ttl=<s>    PLATFORM_CACHE_TTL of the service (env PLATFORM_CACHE_TTL; default: the service's, 5)
  --database=memory|file      DATABASE_URL=memory:// (default) or a temporary DATA_DIR (env FLOWS_DATABASE)
  --no-guild-state            only (a), on a service with GUILD_STATE_FEED=false (env FLOWS_GUILD_STATE=off)
  --no-feed                   report neither feed: only (a), membership unknown (env FLOWS_FEED=off)
  --write                     also write the report to bench/flows-results.md
  --help                      this text`;

interface Options {
  latencyMs: number;
  reps: number;
  warmup: number;
  /** Null: the service's default. */
  platformCacheTtl: number | null;
  database: 'memory' | 'file';
  feed: boolean;
  guildState: boolean;
  write: boolean;
}

/** The service's defaults this benchmark reports against (src/config/app-config.ts). */
const DEFAULT_PLATFORM_CACHE_TTL_S = 5;
const DEFAULT_PLATFORM_TIMEOUT_MS = 5_000;
/** A redirect the service is told to allow. */
const REDIRECT = DEFAULT_REDIRECT_URI;
/**
 * A pause after each step: a platform call the service makes after it has answered (off the
 * request) then lands between two steps, where it is reported, instead of inside the next step.
 */
const SETTLE_MS = 25;
/** Guilds the bot is not in, which users' guild lists hold beside the bot's. */
const GUILDS_WITHOUT_BOT = 5;
/**
 * The bot reports at least this often between repetitions (an empty batch of the membership
 * feed), so that neither feed goes stale during a long run (BOT_FEED_STALE_AFTER is 120 s).
 */
const HEARTBEAT_MS = 20_000;
/** The scope that lets the service read the caller's own member with the caller's token. */
const MEMBER_READ = 'guilds.members.read';

/** The ways the steps run, each on guilds and users of its own. */
const MODES = [
  {
    key: 'a',
    title: '(a) without guild state',
    fed: false,
    scopes: undefined,
  },
  {
    key: 'b',
    title: `(b) guild state fed, logins with \`${MEMBER_READ}\``,
    fed: true,
    scopes: ['identify', 'guilds', MEMBER_READ],
  },
  {
    key: 'c',
    title: `(c) guild state fed, logins without \`${MEMBER_READ}\``,
    fed: true,
    scopes: ['identify', 'guilds'],
  },
] as const;

type Mode = (typeof MODES)[number];
type ModeKey = Mode['key'];

/** The steps, in the order a repetition runs them. */
const STEPS = [
  { key: 'login', title: '1. login (`POST /oauth2`)', hits: 'a new user' },
  {
    key: 'listCold',
    title: '2. guild list, cold',
    hits: "that user's first `GET /users/@me/guilds`",
  },
  { key: 'listWarm', title: '3. guild list, warm', hits: 'the same again' },
  {
    key: 'openCold',
    title: '4. open a guild, cold',
    hits: '`GET /users/@me/guilds/{id}`, a guild nobody opened',
  },
  { key: 'openWarm', title: '5. open a guild, warm', hits: 'the same again' },
  {
    key: 'openSecond',
    title: '6. second member opens it',
    hits: 'another member of that guild, right after',
  },
  {
    key: 'openKnown',
    title: '6b. open a guild, member known',
    hits: 'the step 1 user again, right after a rename (reported by the bot in b, c): member known from 4, the new state read once',
  },
  {
    key: 'schemasCold',
    title: '7a. settings schemas, cold',
    hits: '`GET /guilds/{id}/settings`, a fresh guild (not the one of 4)',
  },
  { key: 'schemasWarm', title: '7b. settings schemas, warm', hits: 'the same again' },
  {
    key: 'viewCold',
    title: '8a. View, cold',
    hits: 'first `guildroles` View of another fresh guild, by its owner (the step 1 user)',
  },
  { key: 'viewWarm', title: '8b. View, warm', hits: 'the same again' },
  { key: 'create', title: '9. Create', hits: 'a `guildroles` entry for a role of that guild' },
  { key: 'viewAfter', title: '10. View after the change', hits: 'right after the Create' },
] as const;

type StepKey = (typeof STEPS)[number]['key'];

/** The users and guilds one repetition uses, and nothing else does. */
interface RepWorld {
  /** Logs in at step 1 and goes through the flow; owns `openGuild` and `viewGuild`. */
  user: string;
  /** Logged in before the measurements; a member of `openGuild`, the owner of `schemasGuild`. */
  secondMember: string;
  openGuild: string;
  schemasGuild: string;
  viewGuild: string;
  /** The role of `viewGuild` step 9 gives a permission (not @everyone). */
  viewRole: string;
}

interface World {
  seed: EmulatorSeed;
  botId: string;
  /** The ROOT_USERS user, who reports the bot's guilds through the feeds. */
  operator: string;
  reps: RepWorld[];
  botGuildIds: string[];
  guildsWithoutBot: string[];
  users: number;
}

/** Who a platform call was made as. */
type Token = 'bot' | 'user' | 'app';

/** One platform call of a step. */
interface Call {
  label: string;
  token: Token;
  /** When it started, ms after the step's start. */
  offsetMs: number;
}

/** One step of one repetition (measured or warm-up). */
interface Sample {
  ms: number;
  /** The platform calls the step made, in arrival order. */
  calls: Call[];
  /** Step 6b: whether the answer showed the guild's new name. */
  fresh?: boolean;
}

/** Platform calls made between two steps, after `after`. */
interface Stray {
  after: string;
  labels: string[];
}

interface FeedOutcome {
  used: boolean;
  line: string;
}

class StepFailure extends Error {}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const modes = MODES.filter((mode) => !mode.fed || (options.feed && options.guildState));
  const perMode = options.warmup + options.reps;
  const world = buildWorld(modes.length * perMode);
  // Repetition `rep` of `mode` runs on world.reps[rep * modes + the mode's place].
  const repOf = (rep: number, mode: number): RepWorld => world.reps[rep * modes.length + mode];
  // The log keeps every request of the run: the counts per step are read from it.
  const emulator = await PlatformEmulator.start(world.seed, {}, { maxLoggedRequests: 10_000_000 });
  const dataDir =
    options.database === 'file' ? mkdtempSync(join(tmpdir(), 'bms-flows-')) : undefined;
  let service: FlowsService | null = null;
  try {
    service = await startService(serviceEnv(options, world, emulator, dataDir));
    const run = new FlowRun(service, emulator, world, options);
    await run.prepare(modes, perMode, repOf);
    if (options.latencyMs > 0) {
      // Every platform answer waits the latency; closing the emulator cuts the wait short.
      emulator.intercept(async (_route, _reply, signal) => {
        await sleep(options.latencyMs, undefined, { signal });
      });
    }
    const feed = options.feed
      ? await run.reportBotGuilds()
      : { used: false, line: 'Membership feed: not used (--no-feed).' };
    console.log(feed.line);
    const fedGuilds = modes.flatMap((mode, m) =>
      mode.fed
        ? Array.from({ length: perMode }, (_, rep) => {
            const r = repOf(rep, m);
            return [r.openGuild, r.schemasGuild, r.viewGuild];
          }).flat()
        : [],
    );
    const guildState: FeedOutcome = !options.feed
      ? { used: false, line: 'Guild-state feed: not used (--no-feed).' }
      : !options.guildState
        ? {
            used: false,
            line: 'Guild-state feed: off (`GUILD_STATE_FEED=false`, --no-guild-state).',
          }
        : await run.reportGuildStates(fedGuilds);
    console.log(guildState.line);
    for (let rep = 0; rep < perMode; rep++) {
      const measured = rep >= options.warmup;
      // Each repetition starts with another way, so that none always follows the same one.
      for (let i = 0; i < modes.length; i++) {
        const m = (rep + i) % modes.length;
        await run.heartbeatIfDue();
        await run.repetition(repOf(rep, m), modes[m], measured);
      }
      console.log(`${measured ? 'repetition' : 'warm-up'} ${rep + 1} of ${perMode} done`);
    }
    const markdown = report(run, options, modes, world, service, feed, guildState);
    console.log(`\n${markdown}`);
    if (options.write) writeFileSync(join(ROOT, 'bench', 'flows-results.md'), markdown);
  } catch (error) {
    if (error instanceof StepFailure && service) {
      error.message += `\n\nThe service's last log lines:\n${service.logTail.join('\n')}`;
    }
    throw error;
  } finally {
    if (service) await stopServiceProcess(service.process);
    await emulator.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

// --- Options -------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const options: Options = {
    latencyMs: integer('FLOWS_LATENCY_MS', env.FLOWS_LATENCY_MS ?? '100', 0),
    reps: integer('FLOWS_REPS', env.FLOWS_REPS ?? '15', 1),
    warmup: integer('FLOWS_WARMUP', env.FLOWS_WARMUP ?? '1', 0),
    platformCacheTtl: env.PLATFORM_CACHE_TTL
      ? integer('PLATFORM_CACHE_TTL', env.PLATFORM_CACHE_TTL, 1)
      : null,
    database: databaseOption('FLOWS_DATABASE', env.FLOWS_DATABASE ?? 'memory'),
    feed: env.FLOWS_FEED !== 'off',
    guildState: env.FLOWS_GUILD_STATE !== 'off',
    write: false,
  };
  for (const arg of args) {
    const [name, value] = arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    const needs = (): string => {
      if (value === undefined) throw new Error(`${name} needs a value: ${name}=…\n\n${USAGE}`);
      return value;
    };
    switch (name) {
      case '--latency-ms':
        options.latencyMs = integer(name, needs(), 0);
        break;
      case '--reps':
        options.reps = integer(name, needs(), 1);
        break;
      case '--warmup':
        options.warmup = integer(name, needs(), 0);
        break;
      case '--platform-cache-ttl':
        options.platformCacheTtl = integer(name, needs(), 1);
        break;
      case '--database':
        options.database = databaseOption(name, needs());
        break;
      case '--no-feed':
        options.feed = false;
        break;
      case '--no-guild-state':
        options.guildState = false;
        break;
      case '--write':
        options.write = true;
        break;
      case '--help':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${arg}\n\n${USAGE}`);
    }
  }
  return options;
}

// --- The platform's world ------------------------------------------------------------------------

/**
 * A world with three fresh guilds the bot is in and two fresh users per repetition, plus guilds the
 * bot is not in, so that no step can find in a cache what an earlier step loaded. Each guild has a
 * few roles (the bot's managed one among them), a category with text and voice channels, a channel
 * with overwrites and a thread: what the permission maths and the channel order have to go through.
 */
function buildWorld(repetitions: number): World {
  const bot = DEMO_SEED.users.find((user) => user.bot);
  if (!bot) throw new Error('the demo seed has no bot user');
  const userId = (n: number): string => (1_400_000_000_900_000_000n + BigInt(n)).toString();
  const guildId = (n: number): string =>
    (1_400_000_000_000_000_000n + BigInt(n) * 1_000n).toString();
  const operator = userId(0);
  const reps: RepWorld[] = Array.from({ length: repetitions }, (_, rep) => ({
    user: userId(1 + 2 * rep),
    secondMember: userId(2 + 2 * rep),
    openGuild: guildId(3 * rep),
    schemasGuild: guildId(3 * rep + 1),
    viewGuild: guildId(3 * rep + 2),
    viewRole: roleIds(guildId(3 * rep + 2)).moderator,
  }));
  const guildsWithoutBot = Array.from({ length: GUILDS_WITHOUT_BOT }, (_, i) =>
    guildId(3 * repetitions + i),
  );

  const members = new Map<string, SeedMember[]>();
  const join = (guild: string, user: string, roles: string[] = []): void => {
    const list = members.get(guild) ?? [];
    list.push({ user_id: user, roles, joined_at: '2025-01-01T00:00:00.000Z' });
    members.set(guild, list);
  };
  reps.forEach((rep, i) => {
    const openRoles = roleIds(rep.openGuild);
    join(rep.openGuild, rep.user);
    join(rep.openGuild, rep.secondMember, [openRoles.moderator, openRoles.member]);
    join(rep.schemasGuild, rep.secondMember);
    join(rep.schemasGuild, rep.user, [roleIds(rep.schemasGuild).member]);
    join(rep.viewGuild, rep.user);
    // Longer lists, as real users have: another repetition's guild (never opened by this user)
    // and two guilds the bot is not in.
    if (reps.length > 1) {
      const other = reps[(i + 1) % reps.length].openGuild;
      join(other, rep.user, [roleIds(other).member]);
    }
    join(guildsWithoutBot[i % GUILDS_WITHOUT_BOT], rep.user);
    join(guildsWithoutBot[(i + 2) % GUILDS_WITHOUT_BOT], rep.user);
  });
  const owners = new Map<string, string>();
  for (const rep of reps) {
    owners.set(rep.openGuild, rep.user);
    owners.set(rep.schemasGuild, rep.secondMember);
    owners.set(rep.viewGuild, rep.user);
  }
  const botGuildIds = reps.flatMap((rep) => [rep.openGuild, rep.schemasGuild, rep.viewGuild]);
  for (const id of botGuildIds) join(id, bot.id, [roleIds(id).bot]);
  for (const id of guildsWithoutBot) {
    owners.set(id, operator);
    join(id, operator);
  }

  const users: APIUser[] = [
    bot,
    user(operator, 'operator'),
    ...reps.flatMap((rep, i) => [
      user(rep.user, `dashboard_user_${i}`),
      user(rep.secondMember, `second_member_${i}`),
    ]),
  ];
  const guilds = [...botGuildIds, ...guildsWithoutBot].map((id, i) =>
    guild(id, `Flows Guild ${i}`, owners.get(id) ?? operator, members.get(id) ?? [], bot.id),
  );
  return {
    seed: { application: DEMO_SEED.application, users, guilds },
    botId: bot.id,
    operator,
    reps,
    botGuildIds,
    guildsWithoutBot,
    users: users.length,
  };
}

function user(id: string, username: string): APIUser {
  return { id, username, discriminator: '0', global_name: username, avatar: null };
}

function roleIds(guildId: string): {
  admin: string;
  bot: string;
  moderator: string;
  member: string;
} {
  const id = (n: number): string => (BigInt(guildId) + BigInt(n)).toString();
  return { admin: id(1), bot: id(2), moderator: id(3), member: id(4) };
}

const bits = (...flags: bigint[]): string => flags.reduce((all, flag) => all | flag, 0n).toString();

function guild(
  id: string,
  name: string,
  ownerId: string,
  members: SeedMember[],
  botId: string,
): SeedGuild {
  const roles = roleIds(id);
  const channel = (n: number): string => (BigInt(id) + 100n + BigInt(n)).toString();
  return {
    id,
    name,
    icon: null,
    owner_id: ownerId,
    roles: [
      { id, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
      { id: roles.admin, name: 'Admin', permissions: bits(P.Administrator), position: 4 },
      {
        id: roles.bot,
        name: 'Demo Moderation Bot',
        permissions: bits(
          P.ViewChannel,
          P.SendMessages,
          P.ManageRoles,
          P.ManageChannels,
          P.KickMembers,
          P.BanMembers,
          P.ModerateMembers,
        ),
        position: 3,
        managed: true,
        tags: { bot_id: botId },
      },
      {
        id: roles.moderator,
        name: 'Moderator',
        permissions: bits(P.KickMembers, P.BanMembers, P.ModerateMembers, P.ManageMessages),
        position: 2,
      },
      { id: roles.member, name: 'Member', permissions: '0', position: 1 },
    ],
    channels: [
      { id: channel(0), type: ChannelType.GuildCategory, name: 'General', position: 0 },
      {
        id: channel(1),
        type: ChannelType.GuildText,
        name: 'welcome',
        position: 0,
        parent_id: channel(0),
        permission_overwrites: [
          { id, type: OverwriteType.Role, allow: '0', deny: bits(P.SendMessages) },
        ],
      },
      {
        id: channel(2),
        type: ChannelType.GuildText,
        name: 'chat',
        position: 1,
        parent_id: channel(0),
      },
      {
        id: channel(3),
        type: ChannelType.GuildVoice,
        name: 'Voice',
        position: 2,
        parent_id: channel(0),
      },
      {
        id: channel(4),
        type: ChannelType.GuildText,
        name: 'mod-log',
        position: 1,
        permission_overwrites: [
          { id, type: OverwriteType.Role, allow: '0', deny: bits(P.ViewChannel) },
          { id: roles.moderator, type: OverwriteType.Role, allow: bits(P.ViewChannel), deny: '0' },
        ],
      },
      {
        id: channel(5),
        type: ChannelType.PublicThread,
        name: 'introductions',
        position: 0,
        parent_id: channel(2),
      },
    ],
    members,
  };
}

// --- The service ---------------------------------------------------------------------------------

interface FlowsService {
  process: ChildProcess;
  baseUrl: string;
  /** From the service's "Service started" line, e.g. `Node.js v26.10.0`. */
  runtime: string;
  /** The newest lines the service logged, shown when a step fails. */
  logTail: string[];
}

function serviceEnv(
  options: Options,
  world: World,
  emulator: PlatformEmulator,
  dataDir: string | undefined,
): Record<string, string> {
  const { application } = world.seed;
  return {
    // Live mode: the emulator stands where Discord would.
    DISCORD_BOT_TOKEN: application.bot_token,
    DISCORD_CLIENT_ID: application.id,
    DISCORD_CLIENT_SECRET: application.secret,
    DISCORD_API_URL: emulator.apiUrl,
    OAUTH2_ALLOWED_REDIRECTS: REDIRECT,
    ROOT_USERS: world.operator,
    ...(dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: 'memory://' }),
    ...(options.guildState ? {} : { GUILD_STATE_FEED: 'false' }),
    ...(options.platformCacheTtl !== null
      ? { PLATFORM_CACHE_TTL: String(options.platformCacheTtl) }
      : {}),
    // A latency near the service's timeout would measure its retries instead of its calls.
    ...(options.latencyMs * 2 > DEFAULT_PLATFORM_TIMEOUT_MS
      ? { PLATFORM_TIMEOUT_MS: String(Math.min(60_000, options.latencyMs * 4)) }
      : {}),
  };
}

/**
 * Starts the built service as `npm start` does (bench/service-process.ts), but on a port of its
 * own choosing (PORT=0), read back from its "Service started" line with the runtime it names.
 */
async function startService(env: Record<string, string>): Promise<FlowsService> {
  const child = spawn(
    process.execPath,
    [...SERVICE_NODE_OPTIONS, join(ROOT, 'dist', 'src', 'main.js')],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        HOST: '127.0.0.1',
        RATE_LIMITS_ENABLED: 'false',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logTail: string[] = [];
  const keep = (line: string): void => {
    logTail.push(line);
    if (logTail.length > 20) logTail.shift();
  };
  createInterface({ input: child.stderr }).on('line', keep);
  const started = new Promise<{ port: number; runtime: string }>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      keep(line);
      if (!line.includes('"Service started"')) return;
      const fields = JSON.parse(line) as { port: number; runtime: string };
      resolve({ port: fields.port, runtime: fields.runtime });
    });
    child.once('exit', (code) =>
      reject(new Error(`the service exited (${code}) before it started:\n${logTail.join('\n')}`)),
    );
  });
  try {
    const { port, runtime } = await Promise.race([
      started,
      sleep(60_000, undefined, { ref: false }).then(() =>
        Promise.reject(new Error('the service did not start in 60 s')),
      ),
    ]);
    const baseUrl = `http://127.0.0.1:${port}`;
    if (!(await fetch(`${baseUrl}/healthz`)).ok) throw new Error('the service is not healthy');
    return { process: child, baseUrl, runtime, logTail };
  } catch (error) {
    await stopServiceProcess(child);
    throw error;
  }
}

// --- The flow ------------------------------------------------------------------------------------

type Steps<T> = Map<ModeKey, Map<StepKey, T[]>>;

function stepsByMode<T>(): Steps<T> {
  return new Map(MODES.map((mode) => [mode.key, new Map(STEPS.map((step) => [step.key, []]))]));
}

class FlowRun {
  readonly samples = stepsByMode<Sample>();
  /** The discarded warm-up's steps: what a fresh process pays once shows there. */
  readonly warmup = stepsByMode<Sample>();
  readonly strays: Stray[] = [];
  /** Login tokens of the users logged in before the measurements. */
  private readonly tokens = new Map<string, string>();
  /** The operator's API token, which reports for the bot. */
  private apiToken = '';
  /** The bot's one guild-state stream (one process, one shard). */
  private readonly stream = { id: randomUUID(), started_at: new Date().toISOString() };
  private streamSeq = 0;
  private lastReportMs = 0;
  /** How far the emulator's log had been read: calls past it were made since. */
  private seen = 0;
  private lastStep = 'setup';

  constructor(
    private readonly service: FlowsService,
    private readonly emulator: PlatformEmulator,
    private readonly world: World,
    private readonly options: Options,
  ) {}

  /**
   * Logs in, before the latency is added, everyone but the users step 1 logs in: the operator, and
   * each repetition's second member with the scopes of its way.
   */
  async prepare(
    modes: readonly Mode[],
    perMode: number,
    repOf: (rep: number, mode: number) => RepWorld,
  ): Promise<void> {
    this.tokens.set(this.world.operator, await this.login('setup', this.world.operator));
    for (let rep = 0; rep < perMode; rep++) {
      for (const [m, mode] of modes.entries()) {
        const { secondMember } = repOf(rep, m);
        this.tokens.set(secondMember, await this.login('setup', secondMember, mode.scopes));
      }
    }
    const login = this.tokens.get(this.world.operator)!;
    const created = await this.call('setup', 'POST', '/sessions', {
      token: login,
      body: { name: 'bench bot', type: 'api', expiry: 3600 },
      expect: 201,
    });
    this.apiToken = (created.body as { token: string }).token;
    this.seen = this.emulator.requests.length;
  }

  /**
   * Reports every guild the bot is in through the membership feed, as the bot does at connect:
   * an API token of a ROOT_USERS user, then the shard's snapshot.
   */
  async reportBotGuilds(): Promise<FeedOutcome> {
    const ids = this.world.botGuildIds;
    const before = this.emulator.requests.length;
    const answer = await this.call('membership feed', 'PUT', '/internal/shards/0/guilds', {
      token: this.apiToken,
      body: {
        shard_count: 1,
        snapshot_at: new Date().toISOString(),
        total: ids.length,
        guild_ids: ids,
      },
      expect: [200, 404],
    });
    if (answer.status === 404) {
      this.seen = this.emulator.requests.length;
      return {
        used: false,
        line: `Membership feed: not available in this build (PUT /internal/shards/0/guilds answered 404 ${answer.text}); measured without it.`,
      };
    }
    const body = answer.body as { received?: unknown; complete?: unknown };
    if (body.complete !== true || body.received !== ids.length) {
      throw new StepFailure(
        `membership feed: PUT /internal/shards/0/guilds answered 200 without complete: true and received: ${ids.length}: ${answer.text}`,
      );
    }
    this.lastReportMs = Date.now();
    // Whatever the service does with the snapshot off the request is left to finish first.
    await sleep(500);
    const calls = this.labels(this.emulator.requests.slice(before));
    this.seen = this.emulator.requests.length;
    return {
      used: true,
      line: `Membership feed: used. The bot's ${ids.length} guilds were reported before the steps (PUT /internal/shards/0/guilds answered 200 ${answer.text}; platform calls within 500 ms: ${calls.length === 0 ? 'none' : summarise(calls)}).`,
    };
  }

  /**
   * Reports the full state of the guilds of (b) and (c), as the emulator's gateway shows them
   * (`gatewayGuildState`), through the guild-state feed as the bot does at connect: a stream of
   * `guild_create` reports with each guild's hash, cut as the reporter cuts batches. Then checks
   * with `GET /internal/guild-state` that exactly those guilds are read from it.
   */
  async reportGuildStates(guildIds: string[]): Promise<FeedOutcome> {
    const before = this.emulator.requests.length;
    const changes: GuildStateChange[] = guildIds.map((id) => ({
      type: 'guild_create',
      guild_id: id,
      guild: this.emulator.state.gatewayGuildState(id),
    }));
    let batches = 0;
    let bytes = 0;
    for (const batch of cutBatches(changes)) {
      const sent = await this.reportState(batch);
      batches += 1;
      bytes += sent.bytes;
      if (sent.receipt.applied !== batch.length || sent.receipt.resync.length > 0) {
        throw new StepFailure(
          `guild-state feed: ${batch.length} guild_create reports were answered ${JSON.stringify(sent.receipt)}`,
        );
      }
    }
    const { body } = await this.call('guild-state feed', 'GET', '/internal/guild-state', {
      token: this.apiToken,
    });
    const status = body as { guilds: number; live: number; behind: Record<string, number> };
    const unfed = this.world.botGuildIds.length - guildIds.length;
    if (status.live !== guildIds.length || status.behind.missing !== unfed) {
      throw new StepFailure(
        `guild-state feed: expected ${guildIds.length} guilds live and ${unfed} missing: ${JSON.stringify(body)}`,
      );
    }
    await sleep(500);
    const calls = this.labels(this.emulator.requests.slice(before));
    this.seen = this.emulator.requests.length;
    return {
      used: true,
      line: `Guild-state feed: used. The full state of the ${guildIds.length} guilds of (b) and (c) was reported before the steps (${batches} batch${batches === 1 ? '' : 'es'} of \`guild_create\` reports, ${kib(bytes)} KiB, to POST /internal/shards/0/guild-state); \`GET /internal/guild-state\` then held ${status.live} of ${status.guilds} guilds live and the ${unfed} of (a) \`missing\`, which the service reads from the platform as with \`GUILD_STATE_FEED=false\`; platform calls within 500 ms: ${calls.length === 0 ? 'none' : summarise(calls)}.`,
    };
  }

  /** An empty batch of the membership feed when the bot has been quiet a while (not timed). */
  async heartbeatIfDue(): Promise<void> {
    if (!this.options.feed || Date.now() - this.lastReportMs < HEARTBEAT_MS) return;
    await this.call('heartbeat', 'POST', '/internal/shards/0/guild-events', {
      token: this.apiToken,
      body: { events: [] },
    });
    this.lastReportMs = Date.now();
    await sleep(SETTLE_MS);
    this.seen = this.emulator.requests.length;
  }

  /** One pass through the dashboard's steps on this repetition's own users and guilds. */
  async repetition(rep: RepWorld, mode: Mode, measured: boolean): Promise<void> {
    const step = (key: StepKey, action: () => Promise<unknown>): Promise<void> =>
      this.measure(mode, key, measured, action);
    const second = this.tokens.get(rep.secondMember)!;
    let token = '';

    await step('login', async () => (token = await this.login('login', rep.user, mode.scopes)));
    for (const key of ['listCold', 'listWarm'] as const) {
      await step(key, async () => {
        const { body } = await this.call(key, 'GET', '/users/@me/guilds', { token });
        const list = body as { bot_in_guilds: string[] };
        if (!list.bot_in_guilds.includes(rep.openGuild)) {
          throw new StepFailure(
            `${key}: bot_in_guilds lacks ${rep.openGuild}: ${JSON.stringify(body)}`,
          );
        }
        if (this.world.guildsWithoutBot.some((id) => list.bot_in_guilds.includes(id))) {
          throw new StepFailure(`${key}: bot_in_guilds holds a guild the bot is not in`);
        }
      });
    }
    const open = async (key: StepKey, as: string): Promise<{ name: string }> => {
      const { body } = await this.call(key, 'GET', `/users/@me/guilds/${rep.openGuild}`, {
        token: as,
      });
      if ((body as { owner_id: string }).owner_id !== rep.user) {
        throw new StepFailure(`${key}: not the guild expected: ${JSON.stringify(body)}`);
      }
      return body as { name: string };
    };
    for (const [key, as] of [
      ['openCold', token],
      ['openWarm', token],
      ['openSecond', second],
    ] as const) {
      await step(key, () => open(key, as));
    }
    // The guild is renamed on the platform; in (b) and (c) the bot reports it, as its gateway
    // would announce it, before the user opens the guild again.
    const renamed = `${this.emulator.state.guild(rep.openGuild)!.name} (renamed)`;
    await this.changeGuild(rep.openGuild, mode.fed, () =>
      this.emulator.state.updateGuild(rep.openGuild, { name: renamed }),
    );
    await step('openKnown', async () => {
      const { name } = await open('openKnown', token);
      return { fresh: name === renamed };
    });
    for (const key of ['schemasCold', 'schemasWarm'] as const) {
      await step(key, () =>
        this.call(key, 'GET', `/guilds/${rep.schemasGuild}/settings`, { token }),
      );
    }
    const settings = (key: StepKey, operation: string, fields: object): Promise<Answer> =>
      this.call(key, 'POST', `/guilds/${rep.viewGuild}/settings`, {
        token,
        body: { setting: 'guildroles', operation, fields },
      });
    for (const key of ['viewCold', 'viewWarm'] as const) {
      await step(key, () => settings(key, 'View', {}));
    }
    await step('create', () =>
      settings('create', 'Create', { role_id: rep.viewRole, perms: ['guildroles.view'], index: 1 }),
    );
    await step('viewAfter', async () => {
      const { text } = await settings('viewAfter', 'View', {});
      if (!text.includes(rep.viewRole)) {
        throw new StepFailure(`viewAfter: the View lacks the entry just created: ${text}`);
      }
    });
  }

  /**
   * Applies a change to a guild on the platform and, when the bot reports the guild's state,
   * reports what the emulator's gateway announced, as the bot would (not timed).
   */
  private async changeGuild(guildId: string, report: boolean, change: () => void): Promise<void> {
    const announced: GuildStateChange[] = [];
    const stop = this.emulator.state.onGuildState((event) => announced.push(event));
    try {
      change();
    } finally {
      stop();
    }
    if (!report) return;
    const { receipt } = await this.reportState(announced);
    if (receipt.applied !== announced.length || receipt.resync.length > 0) {
      throw new StepFailure(
        `guild-state feed: the change of ${guildId} was answered ${JSON.stringify(receipt)}`,
      );
    }
    await sleep(SETTLE_MS);
    this.seen = this.emulator.requests.length;
  }

  /** Numbers the changes in the bot's stream, each with its guild's hash, and sends them. */
  private async reportState(
    changes: GuildStateChange[],
  ): Promise<{ receipt: GuildStateReceipt; bytes: number }> {
    const at = new Date().toISOString();
    const reports: GuildStateReport[] = changes.map((change) => ({
      ...change,
      seq: ++this.streamSeq,
      at,
      hash: guildStateHash(this.emulator.state.gatewayGuildState(change.guild_id)),
    }));
    const body = { stream: this.stream, reports };
    const answer = await this.call('guild-state feed', 'POST', '/internal/shards/0/guild-state', {
      token: this.apiToken,
      body,
    });
    this.lastReportMs = Date.now();
    return {
      receipt: answer.body as GuildStateReceipt,
      bytes: Buffer.byteLength(JSON.stringify(body)),
    };
  }

  /** Runs one step alone, timing it and reading off the platform calls it made. */
  private async measure(
    mode: Mode,
    key: StepKey,
    measured: boolean,
    action: () => Promise<unknown>,
  ): Promise<void> {
    const log = this.emulator.requests;
    if (log.length !== this.seen) {
      this.strays.push({ after: this.lastStep, labels: this.labels(log.slice(this.seen)) });
    }
    const before = log.length;
    const startedAt = Date.now();
    const started = performance.now();
    const outcome = await action();
    const ms = performance.now() - started;
    const calls = log.slice(before).map((request) => ({
      label: this.label(request),
      token: tokenOf(request),
      offsetMs: request.at - startedAt,
    }));
    const fresh = (outcome as { fresh?: boolean } | undefined)?.fresh;
    (measured ? this.samples : this.warmup).get(mode.key)!.get(key)!.push({ ms, calls, fresh });
    await sleep(SETTLE_MS);
    this.seen = before + calls.length;
    this.lastStep = `${STEPS.find((step) => step.key === key)!.title} ${mode.title.split(' ')[0]}`;
  }

  private async login(step: string, userId: string, scopes?: readonly string[]): Promise<string> {
    const code = this.emulator.issueCode({
      userId,
      redirectUri: REDIRECT,
      ...(scopes ? { scopes: [...scopes] } : {}),
    });
    const { body } = await this.call(step, 'POST', '/oauth2', {
      body: { code, redirect_uri: REDIRECT },
    });
    return (body as { token: string }).token;
  }

  /** One request to the service; any status but the expected one aborts the benchmark. */
  private async call(
    step: string,
    method: string,
    path: string,
    { token, body, expect = 200 }: { token?: string; body?: object; expect?: number | number[] },
  ): Promise<Answer> {
    let response: Response;
    try {
      response = await fetch(`${this.service.baseUrl}${path}`, {
        method,
        headers: {
          ...(body ? { 'Content-Type': 'application/json' } : {}),
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch (error) {
      throw new StepFailure(`step "${step}": ${method} ${path} failed: ${String(error)}`);
    }
    const text = await response.text();
    if (!(Array.isArray(expect) ? expect : [expect]).includes(response.status)) {
      throw new StepFailure(
        `step "${step}": ${method} ${path} answered ${response.status} (expected ${String(expect)}): ${text}`,
      );
    }
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new StepFailure(`step "${step}": ${method} ${path} answered no JSON: ${text}`);
    }
    return { status: response.status, body: parsed, text };
  }

  private labels(requests: EmulatedRequest[]): string[] {
    return requests.map((request) => this.label(request));
  }

  /**
   * The route template, told apart where one template serves different callers: the bot's own
   * user and guild list against a user's (its grant), the bot's member against a user's.
   */
  private label(request: EmulatedRequest): string {
    if (request.route === 'GET /guilds/:guild_id/members/:user_id') {
      const bot = request.url.split('?')[0].endsWith(`/members/${this.world.botId}`);
      return `${request.route} (${bot ? 'the bot' : 'a user'})`;
    }
    return request.route;
  }

  get latencyMs(): number {
    return this.options.latencyMs;
  }
}

/** The bot's token, a user's (their OAuth2 grant), or the application's own credentials. */
function tokenOf(request: EmulatedRequest): Token {
  if (request.auth === 'bot') return 'bot';
  if (request.auth === 'bearer') return 'user';
  return 'app';
}

/** Reports cut as the reporter cuts batches: at most 1,000 reports and 1 MiB of body. */
function* cutBatches(changes: GuildStateChange[]): Generator<GuildStateChange[]> {
  // Room for the stream, the seq, the time and the hash each report gets.
  const budget = MAX_STATE_BATCH_BYTES - 1_024;
  let batch: GuildStateChange[] = [];
  let bytes = 0;
  for (const change of changes) {
    const size = Buffer.byteLength(JSON.stringify(change)) + 160;
    if (batch.length > 0 && (batch.length === MAX_STATE_REPORTS || bytes + size > budget)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(change);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

// --- The report ----------------------------------------------------------------------------------

function report(
  run: FlowRun,
  options: Options,
  modes: readonly Mode[],
  world: World,
  service: FlowsService,
  feed: FeedOutcome,
  guildState: FeedOutcome,
): string {
  const latency = run.latencyMs;
  const lines = [
    '# Dashboard flows: time and platform calls per step',
    '',
    `\`npm run bench:flows\`, ${new Date().toISOString()}.`,
    '',
    `- Service: ${versionLine()}, ${service.runtime}; live mode against an emulator in the benchmark's process, ${options.database === 'memory' ? '`DATABASE_URL=memory://`' : 'embedded database in a temporary `DATA_DIR`'}, rate limits off.`,
    `- Platform latency: ${latency} ms added to every emulator answer. Repetitions: ${options.reps} measured each way (medians below), after ${options.warmup} discarded warm-up each way; the ways take turns, a repetition of each, each repetition starting with another.`,
    `- \`PLATFORM_CACHE_TTL\`: ${options.platformCacheTtl ?? `${DEFAULT_PLATFORM_CACHE_TTL_S} (the service's default)`} s.`,
    `- ${feed.line}`,
    `- ${guildState.line}`,
    `- World: ${world.botGuildIds.length} guilds the bot is in (3 fresh ones per repetition and way), ${world.guildsWithoutBot.length} it is not in, ${world.users} users (2 fresh ones per repetition and way). Steps run one at a time, ${SETTLE_MS} ms apart.`,
    '',
    `Each cell: median ms (platform round trips, ms ÷ ${latency}) · bot-token calls / user-token calls (the user's own OAuth2 token). A login's code exchange is made with the application's credentials, neither; see the route tables.`,
    '',
    `| step | what it hits | ${modes.map((mode) => mode.title).join(' | ')} |`,
    `| --- | --- | ${modes.map(() => '---').join(' | ')} |`,
  ];
  for (const step of STEPS) {
    const cells = modes.map((mode) => {
      const samples = run.samples.get(mode.key)!.get(step.key)!;
      const ms = median(samples.map((s) => s.ms));
      const roundTrips = latency > 0 ? ` (${(ms / latency).toFixed(1)})` : '';
      return `${Math.round(ms)}${roundTrips} · ${figure(medianCalls(samples, 'bot'))} / ${figure(medianCalls(samples, 'user'))}`;
    });
    lines.push(`| ${step.title} | ${step.hits} | ${cells.join(' | ')} |`);
  }
  lines.push('', ...targets(run, modes, latency));
  for (const mode of modes) lines.push('', ...modeSection(run, options, mode, latency));
  if (run.strays.length > 0) {
    lines.push(
      '',
      'Platform calls made between steps (after the service had answered), not counted above:',
      '',
      ...run.strays.map((stray) => `- after ${stray.after}: ${summarise(stray.labels)}`),
    );
  } else {
    lines.push('', 'No platform call was made between steps.');
  }
  return `${lines.join('\n')}\n`;
}

/** What the guild-state feed was for, against this run's figures (stated, never asserted). */
function targets(run: FlowRun, modes: readonly Mode[], latency: number): string[] {
  const fed = modes.filter((mode) => mode.fed);
  if (fed.length === 0) return ['No way with guild state ran: no targets of the feed to show.'];
  const of = (mode: ModeKey, step: StepKey): Sample[] => run.samples.get(mode)!.get(step)!;
  const bots = (samples: Sample[]): string => {
    const counts = samples.map((s) => s.calls.filter((c) => c.token === 'bot').length);
    return `${Math.max(...counts)} at most`;
  };
  const roundTrips = (samples: Sample[]): string =>
    latency > 0
      ? `${(median(samples.map((s) => s.ms)) / latency).toFixed(2)} round trips (median)`
      : 'round trips need a latency';
  const lines = ['Against what the guild-state feed was for:', ''];
  if (fed.some((mode) => mode.key === 'b')) {
    for (const step of ['openCold', 'viewCold'] as const) {
      const samples = of('b', step);
      lines.push(
        `- ${STEPS.find((s) => s.key === step)!.title}, (b): bot-token calls ${bots(samples)} in ${samples.length} repetitions (target 0), ${roundTrips(samples)} (target ≤ 1.1).`,
      );
    }
  }
  for (const mode of fed) {
    const samples = of(mode.key, 'openKnown');
    const ms = samples.map((s) => s.ms);
    const fresh = samples.filter((s) => s.fresh === true).length;
    lines.push(
      `- 6b. open a guild, member known, ${mode.title.split(' ')[0]}: ${ms1(median(ms))} ms median, ${ms1(Math.max(...ms))} ms at most (target ≤ 5), platform calls ${Math.max(...samples.map((s) => s.calls.length))} at most; the new name shown in ${fresh} of ${samples.length}.`,
    );
  }
  const rest = modes.find((mode) => !mode.fed);
  if (rest) {
    const samples = of(rest.key, 'openKnown');
    const fresh = samples.filter((s) => s.fresh === true).length;
    lines.push(
      `- 6b. in ${rest.title.split(' ')[0]}: the new name shown in ${fresh} of ${samples.length} (the guild is answered from the platform cache, up to \`PLATFORM_CACHE_TTL\` old).`,
    );
  }
  return lines;
}

function modeSection(run: FlowRun, options: Options, mode: Mode, latency: number): string[] {
  const samplesOf = (step: StepKey): Sample[] => run.samples.get(mode.key)!.get(step)!;
  const lines = [
    `## ${mode.title}`,
    '',
    `| step | median ms | round trips (ms ÷ ${latency}) | bot-token calls | user-token calls | other calls | calls in sequence | ms min–max |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const step of STEPS) {
    const samples = samplesOf(step.key);
    const ms = samples.map((sample) => sample.ms);
    const roundTrips = latency > 0 ? (median(ms) / latency).toFixed(1) : '–';
    lines.push(
      `| ${step.title} | ${Math.round(median(ms))} | ${roundTrips} | ${figure(medianCalls(samples, 'bot'))} | ${figure(medianCalls(samples, 'user'))} | ${figure(medianCalls(samples, 'app'))} | ${latency > 0 ? figure(median(samples.map((s) => waves(s, latency)))) : '–'} | ${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))} |`,
    );
  }
  lines.push(
    '',
    latency > 0
      ? `"Calls in sequence": the calls grouped into waves that started together (within ${Math.round(latency / 2)} ms of each other); each wave waits for the one before, so it is the step's platform round trips. "Other calls": made with the application's credentials (the login's code exchange).`
      : '"Calls in sequence" and round trips need a latency (--latency-ms above 0).',
    '',
    "Platform calls per step: each route template, the token it carried, its calls per repetition and, in ms after the step's start, when they started (median, min–max over the repetitions). A count that varied gives its range and in how many repetitions the route was called at all.",
    '',
    '| step | route | token | calls per repetition | started at ms |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const step of STEPS) {
    const routes = routeFigures(samplesOf(step.key));
    if (routes.length === 0) lines.push(`| ${step.title} | none | – | 0 | – |`);
    routes.forEach((route, i) =>
      lines.push(
        `| ${i === 0 ? step.title : ''} | \`${route.label}\` | ${TOKEN_NAMES[route.token]} | ${route.count} | ${route.offsets} |`,
      ),
    );
  }
  if (options.warmup > 0) {
    lines.push(
      '',
      `The discarded warm-up (${options.warmup} repetition${options.warmup > 1 ? 's' : ''}, on guilds and users of its own; what a fresh process pays once shows here), ms and the platform calls of each step with when they started, ms after the step's start:`,
      '',
      ...STEPS.map((step) => {
        const samples = run.warmup.get(mode.key)!.get(step.key)!;
        const runs = samples.map((sample) => {
          const calls = [...sample.calls].sort((a, b) => a.offsetMs - b.offsetMs);
          const started = calls
            .map((call) => `+${call.offsetMs} \`${call.label}\` (${call.token})`)
            .join(', ');
          return `${Math.round(sample.ms)} ms; ${calls.length === 0 ? 'no platform call' : started}`;
        });
        return `- ${step.title}: ${runs.join('; then ')}`;
      }),
    );
  }
  return lines;
}

const TOKEN_NAMES: Record<Token, string> = {
  bot: 'bot',
  user: 'user',
  app: 'app credentials',
};

function medianCalls(samples: Sample[], token: Token): number {
  return median(samples.map((s) => s.calls.filter((call) => call.token === token).length));
}

interface RouteFigure {
  label: string;
  token: Token;
  count: string;
  offsets: string;
  order: number;
}

function routeFigures(samples: Sample[]): RouteFigure[] {
  const keyOf = (call: Call): string => `${call.label}\u0000${call.token}`;
  const keys = [...new Set(samples.flatMap((s) => s.calls.map(keyOf)))];
  const figures = keys.map((key) => {
    const [label, token] = key.split('\u0000') as [string, Token];
    const counts = samples.map((s) => s.calls.filter((call) => keyOf(call) === key).length);
    const offsets = samples.flatMap((s) =>
      s.calls.filter((call) => keyOf(call) === key).map((call) => call.offsetMs),
    );
    const low = Math.min(...counts);
    const high = Math.max(...counts);
    const count =
      low === high
        ? String(low)
        : `${low}–${high} (in ${counts.filter((c) => c > 0).length} of ${samples.length})`;
    return {
      label,
      token,
      count,
      offsets: `${Math.round(median(offsets))} (${Math.min(...offsets)}–${Math.max(...offsets)})`,
      order: median(offsets),
    };
  });
  return figures.sort((a, b) => a.order - b.order);
}

/** How many waves of calls the step made one after another. */
function waves(sample: Sample, latencyMs: number): number {
  const starts = sample.calls.map((call) => call.offsetMs).sort((a, b) => a - b);
  let count = 0;
  let waveStart = Number.NEGATIVE_INFINITY;
  for (const start of starts) {
    if (start - waveStart > latencyMs / 2) {
      count++;
      waveStart = start;
    }
  }
  return count;
}

/** `route ×2, route` for a list of labels. */
function summarise(labels: string[]): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts].map(([label, n]) => (n > 1 ? `${label} ×${n}` : label)).join(', ');
}

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function figure(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function ms1(value: number): string {
  return value.toFixed(1);
}

function kib(bytes: number): string {
  return (bytes / 1024).toFixed(0);
}

/** The package's name and version, and the commit the tree was built from (with local changes). */
function versionLine(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  let commit = 'commit unknown';
  try {
    const git = (...args: string[]): string =>
      execFileSync('git', args, {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const changed = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
    commit = `commit ${git('rev-parse', '--short', 'HEAD')}${changed > 0 ? ` with ${changed} changed file(s) in src/` : ', src/ unchanged'}`;
  } catch {
    // Not a git checkout: the version alone.
  }
  return `${manifest.name} ${manifest.version} (${commit})`;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
