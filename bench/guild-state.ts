import { execFileSync } from 'node:child_process';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import {
  ChannelType,
  OverwriteType,
  PermissionFlagsBits as P,
  type APIUser,
} from 'discord-api-types/v10';
import { Client } from 'pg';
import { createGuildStateReporter } from 'clients/bot-reporter/src/guild-state-reporter';
import type { GuildState } from 'clients/bot-reporter/src/guild-state';
import type { FetchLike, ReporterError } from 'clients/bot-reporter/src/transport';
import { platformShapes } from 'src/bot-reports/guild-state/platform-shapes';
import { EmbeddedPostgres } from 'src/database/embedded-postgres';
import { GuildContext } from 'src/guilds/guild-context';
import { DEMO_SEED, EVERYONE_DEFAULT } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed, SeedChannel, SeedGuild } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { BENCH_ADMIN_URL, freshPostgresDatabase, type BenchDatabase } from './database';
import { integer } from './options';
import { profileMarkdown, profileWhile, summariseProfile } from './profile';
import { residentMemory } from './resident-memory';
import { callService } from './service-api';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:guild-state`: what the guild-state feed (docs/guild-state.md) costs the service.
 *
 * 1. Ingest: a shard's whole state arriving at once, as after a bot's READY: `--guilds` guilds of
 *    realistic sizes (70% small, 25% medium, 5% large, and a few at the platform's maxima) through
 *    `POST /internal/shards/0/guild-state` on the built service, cut and sent by the bot's own
 *    reporter (`createGuildStateReporter`: batches of at most 1 MiB and 1,000 reports, one at a
 *    time). Meanwhile a dashboard keeps opening guilds of another shard whose state is fed
 *    (`GET /users/@me/guilds/{id}` at a fixed rate, from a worker thread so that this process's own
 *    work never delays it), against the same loop alone before the ingest.
 * 2. Storage and memory: the bytes `bot_guild_states` takes per guild, by size class; the service's
 *    resident memory and V8 heap (after a full collection, through its inspector) before the
 *    ingest, after it (the per-guild facts every instance keeps) and after opening `--memory-guilds`
 *    of the fed guilds (their states in the LRU); and, measured in this process on the same
 *    states, what one LRU entry and one guild context hold against the JSON length the LRU counts.
 *
 * It runs on the embedded database (a temporary DATA_DIR) and on PostgreSQL (a database of its own
 * on BENCH_DATABASE_URL's server, when it answers). Loopback only; the emulator answers at once.
 * Prints a Markdown report; with --write also writes it to bench/guild-state-results.md.
 */

const USAGE = `npm run bench:guild-state -- [options]

  --guilds=<n>          guilds of the shard whose whole state arrives at once (env GUILD_STATE_GUILDS; default 2500)
  --maxima=<n>          of them, guilds at the platform's maxima: 500 channels, 250 roles, 1,000 threads (default 5)
  --probe-guilds=<n>    fed guilds of another shard the dashboard loop opens (default 50)
  --probe-rate=<n>      the dashboard loop's opens a second (default 50)
  --baseline-s=<s>      seconds of the dashboard loop alone before the ingest (default 10)
  --memory-guilds=<n>   fed guilds opened after the ingest, their states then held in the LRU (default 1000)
  --database=both|embedded|postgres
                        where the service keeps its data (env GUILD_STATE_DATABASE; default both, PostgreSQL
                        skipped when BENCH_DATABASE_URL's server does not answer)
  --profile             record the service's CPU profile during each ingest and show its top frames
                        (the ingest's figures then include the profiler's cost)
  --write               also write the report to bench/guild-state-results.md
  --help                this text`;

interface Options {
  guilds: number;
  maxima: number;
  probeGuilds: number;
  probeRate: number;
  baselineS: number;
  memoryGuilds: number;
  database: 'both' | 'embedded' | 'postgres';
  profile: boolean;
  write: boolean;
}

/** A redirect the service allows by default. */
const REDIRECT = DEFAULT_REDIRECT_URI;
/** What the instances' facts and the storage are extrapolated to. */
const EXTRAPOLATE_TO = 100_000;
/** GUILD_STATE_CACHE_MB's default (src/config/app-config.ts). */
const DEFAULT_CACHE_MB = 64;
/** The guild info's member lookups stay cached through the run (the loop measures the service). */
const PLATFORM_CACHE_TTL_S = 300;
/** PostgreSQL flushes a backend's statistics at most every second, and 10 s after it idles. */
const STATS_FLUSH_MS = 11_000;
/** Objects built per size class for the in-process measurement of an LRU entry and a context. */
const SHAPES_PER_CLASS = 200;

// --- Guild sizes ---------------------------------------------------------------------------------

const SIZE_CLASSES = {
  small: { channels: 15, roles: 8, threads: 0, label: 'small (15 channels, 8 roles)' },
  medium: { channels: 40, roles: 20, threads: 0, label: 'medium (40 channels, 20 roles)' },
  large: {
    channels: 120,
    roles: 60,
    threads: 30,
    label: 'large (120 channels, 60 roles, 30 threads)',
  },
  maxima: {
    channels: 500,
    roles: 250,
    threads: 1_000,
    label: 'maxima (500 channels, 250 roles, 1,000 threads)',
  },
} as const;

type SizeClass = keyof typeof SIZE_CLASSES;
const CLASS_ORDER: readonly SizeClass[] = ['small', 'medium', 'large', 'maxima'];

/**
 * The class of the `index`th of `count` guilds: `maxima` of them spread evenly, the others 70%
 * small, 25% medium, 5% large, interleaved so that any stretch of the shard holds the mix.
 */
function sizeClassOf(index: number, count: number, maxima: number): SizeClass {
  if (maxima > 0 && index % Math.floor(count / maxima) === 0 && index / (count / maxima) < maxima) {
    return 'maxima';
  }
  const slot = index % 20;
  return slot === 0 ? 'large' : slot <= 5 ? 'medium' : 'small';
}

// --- The platform's world ------------------------------------------------------------------------

interface World {
  seed: EmulatorSeed;
  operator: string;
  /** Member of every guild: the dashboard user of the loop and of the memory step. */
  user: string;
  /** Shard 0 of 2: the guilds whose state arrives at once. */
  ingestGuilds: string[];
  /** Shard 1 of 2: the guilds the dashboard loop opens. */
  probeGuilds: string[];
  classOf: Map<string, SizeClass>;
}

/** A snowflake whose shard of 2 is `shard`: the shard is (id >> 22) % 2. */
function guildId(index: number, shard: 0 | 1): string {
  return ((1_400_000_000_000n + BigInt(2 * index + shard)) << 22n).toString();
}

function buildWorld(options: Options): World {
  const bot = DEMO_SEED.users.find((candidate) => candidate.bot);
  if (!bot) throw new Error('the demo seed has no bot user');
  const operator = '1400000000900000001';
  const user = '1400000000900000002';
  const classOf = new Map<string, SizeClass>();
  const ingestGuilds = Array.from({ length: options.guilds }, (_, i) => {
    const id = guildId(i, 0);
    classOf.set(id, sizeClassOf(i, options.guilds, options.maxima));
    return id;
  });
  const probeGuilds = Array.from({ length: options.probeGuilds }, (_, i) => {
    const id = guildId(i, 1);
    classOf.set(id, sizeClassOf(i, options.probeGuilds, 0));
    return id;
  });
  const guilds = [...ingestGuilds, ...probeGuilds].map((id, i) =>
    seedGuild(id, `Bench Guild ${i}`, SIZE_CLASSES[classOf.get(id)!], bot.id, user),
  );
  const person = (id: string, username: string): APIUser => ({
    id,
    username,
    discriminator: '0',
    global_name: username,
    avatar: null,
  });
  return {
    seed: {
      application: DEMO_SEED.application,
      users: [bot, person(operator, 'operator'), person(user, 'dashboard_user')],
      guilds,
    },
    operator,
    user,
    ingestGuilds,
    probeGuilds,
    classOf,
  };
}

const bits = (...flags: bigint[]): string => flags.reduce((all, flag) => all | flag, 0n).toString();

/**
 * A guild as communities hold them: roles with permissions (the bot's managed one among them),
 * channels in categories of eight, a third of them with overwrites (private categories, read-only
 * channels), active threads under the text channels. The bot can view every channel.
 */
function seedGuild(
  id: string,
  name: string,
  size: { channels: number; roles: number; threads: number },
  botId: string,
  ownerId: string,
): SeedGuild {
  const at = (n: number): string => (BigInt(id) + BigInt(n)).toString();
  const botRole = at(1);
  const modRole = at(2);
  const roles: SeedGuild['roles'] = [
    { id, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
    {
      id: botRole,
      name: 'Moderation Bot',
      permissions: bits(P.ViewChannel, P.SendMessages, P.ManageRoles, P.KickMembers, P.BanMembers),
      position: size.roles - 1,
      managed: true,
      tags: { bot_id: botId },
    },
    {
      id: modRole,
      name: 'Moderators',
      permissions: bits(P.KickMembers, P.BanMembers, P.ModerateMembers, P.ManageMessages),
      position: size.roles - 2,
    },
  ];
  for (let r = 3; r < size.roles; r++) {
    roles.push({
      id: at(r),
      name: `Community role ${r}`,
      permissions: r % 4 === 0 ? bits(P.SendMessages, P.EmbedLinks, P.AttachFiles) : '0',
      position: size.roles - 1 - r,
    });
  }
  const channels: SeedChannel[] = [];
  let category = '';
  const textChannels: string[] = [];
  for (let c = 0; c < size.channels; c++) {
    const channelId = at(1_000 + c);
    if (c % 8 === 0) {
      category = channelId;
      channels.push({
        id: channelId,
        type: ChannelType.GuildCategory,
        name: `Category ${c / 8}`,
        position: c / 8,
        ...(c % 24 === 8
          ? {
              permission_overwrites: [
                { id, type: OverwriteType.Role, allow: '0', deny: bits(P.ViewChannel) },
                { id: modRole, type: OverwriteType.Role, allow: bits(P.ViewChannel), deny: '0' },
                { id: botRole, type: OverwriteType.Role, allow: bits(P.ViewChannel), deny: '0' },
              ],
            }
          : {}),
      });
      continue;
    }
    const voice = c % 4 === 3;
    if (!voice) textChannels.push(channelId);
    channels.push({
      id: channelId,
      type: voice ? ChannelType.GuildVoice : ChannelType.GuildText,
      name: voice ? `voice-room-${c}` : `text-channel-${c}`,
      position: c % 8,
      parent_id: category,
      ...(c % 3 === 0
        ? {
            permission_overwrites: [
              { id, type: OverwriteType.Role, allow: '0', deny: bits(P.SendMessages) },
              { id: modRole, type: OverwriteType.Role, allow: bits(P.SendMessages), deny: '0' },
            ],
          }
        : {}),
    });
  }
  for (let t = 0; t < size.threads; t++) {
    channels.push({
      id: at(3_000 + t),
      type: ChannelType.PublicThread,
      name: `thread about topic ${t}`,
      position: 0,
      parent_id: textChannels[t % textChannels.length],
    });
  }
  const joined = '2025-01-01T00:00:00.000Z';
  return {
    id,
    name,
    icon: null,
    owner_id: ownerId,
    roles,
    channels,
    members: [
      { user_id: botId, roles: [botRole], joined_at: joined },
      { user_id: ownerId, roles: [modRole], joined_at: joined },
    ],
  };
}

// --- Main ----------------------------------------------------------------------------------------

interface BackendRun {
  database: 'embedded' | 'postgres';
  where: string;
  healthyAfterMs: number;
  ingest: IngestFigures;
  /** The same guilds sent again on a new stream, unchanged (a bot's restart). */
  restart: IngestFigures;
  probe: { baseline: ProbeFigures; ingest: ProbeFigures; restart: ProbeFigures };
  memory: MemoryFigures;
  storage: StorageFigures;
  firstOpens: Map<SizeClass, number[]>;
  /** The same bytes parsed and the same rows written, in one multi-row statement per batch. */
  floor: FloorFigures | null;
  /** With --profile: the service's top frames during the ingest, as Markdown. */
  profile: string | null;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  enableGc();
  const world = buildWorld(options);
  const emulator = await PlatformEmulator.start(world.seed, {}, { maxLoggedRequests: 100_000 });
  const runs: BackendRun[] = [];
  const skipped: string[] = [];
  try {
    const states = new Map(
      [...world.ingestGuilds, ...world.probeGuilds].map((id) => [
        id,
        emulator.state.gatewayGuildState(id),
      ]),
    );
    const jsonBytes = new Map([...states].map(([id, state]) => [id, jsonLength(state)]));
    const shapes = measureShapes(world, states);
    console.log('in-process measurements done');
    const backends: ('embedded' | 'postgres')[] =
      options.database === 'both' ? ['embedded', 'postgres'] : [options.database];
    for (const backend of backends) {
      const database = backend === 'postgres' ? await freshPostgresDatabase('bms_gstate') : null;
      if (backend === 'postgres' && !database) {
        if (options.database === 'postgres') {
          throw new Error(`PostgreSQL cannot be reached at ${BENCH_ADMIN_URL}`);
        }
        skipped.push(`PostgreSQL: skipped, no server answered at ${BENCH_ADMIN_URL}.`);
        continue;
      }
      console.log(`--- ${backend}`);
      runs.push(await runBackend(options, world, emulator, states, database));
    }
    const markdown = report(options, world, jsonBytes, shapes, runs, skipped);
    console.log(`\n${markdown}`);
    if (options.write) writeFileSync(join(ROOT, 'bench', 'guild-state-results.md'), markdown);
  } finally {
    await emulator.close();
  }
}

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const options: Options = {
    guilds: integer('GUILD_STATE_GUILDS', env.GUILD_STATE_GUILDS ?? '2500', 20),
    maxima: 5,
    probeGuilds: 50,
    probeRate: 50,
    baselineS: 10,
    memoryGuilds: 1_000,
    database: databaseChoice('GUILD_STATE_DATABASE', env.GUILD_STATE_DATABASE ?? 'both'),
    profile: false,
    write: false,
  };
  for (const arg of args) {
    const [name, value] = arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    const needs = (): string => {
      if (value === undefined) throw new Error(`${name} needs a value: ${name}=…\n\n${USAGE}`);
      return value;
    };
    switch (name) {
      case '--guilds':
        options.guilds = integer(name, needs(), 20);
        break;
      case '--maxima':
        options.maxima = integer(name, needs(), 0);
        break;
      case '--probe-guilds':
        options.probeGuilds = integer(name, needs(), 1);
        break;
      case '--probe-rate':
        options.probeRate = integer(name, needs(), 1);
        break;
      case '--baseline-s':
        options.baselineS = integer(name, needs(), 1);
        break;
      case '--memory-guilds':
        options.memoryGuilds = integer(name, needs(), 1);
        break;
      case '--database':
        options.database = databaseChoice(name, needs());
        break;
      case '--profile':
        options.profile = true;
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
  options.maxima = Math.min(options.maxima, Math.floor(options.guilds / 20));
  options.memoryGuilds = Math.min(options.memoryGuilds, options.guilds);
  return options;
}

function databaseChoice(name: string, value: string): Options['database'] {
  if (value !== 'both' && value !== 'embedded' && value !== 'postgres') {
    throw new Error(`${name} must be both, embedded or postgres, not "${value}"`);
  }
  return value;
}

// --- One service, one database -------------------------------------------------------------------

async function runBackend(
  options: Options,
  world: World,
  emulator: PlatformEmulator,
  states: Map<string, GuildState>,
  database: BenchDatabase | null,
): Promise<BackendRun> {
  const dataDir = database ? null : mkdtempSync(join(tmpdir(), 'bms-gstate-'));
  const { application } = world.seed;
  const env: Record<string, string> = {
    DISCORD_BOT_TOKEN: application.bot_token,
    DISCORD_CLIENT_ID: application.id,
    DISCORD_CLIENT_SECRET: application.secret,
    DISCORD_API_URL: emulator.apiUrl,
    ROOT_USERS: world.operator,
    PLATFORM_CACHE_TTL: String(PLATFORM_CACHE_TTL_S),
    LOG_LEVEL: 'warn',
    ...(database
      ? { DATABASE_URL: database.url, TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64') }
      : { DATA_DIR: dataDir! }),
  };
  const logFile = join(tmpdir(), `bms-gstate-${process.pid}-${database ? 'pg' : 'embedded'}.log`);
  let service: ServiceProcess | null = null;
  let inspector: Inspector | null = null;
  try {
    service = await startServiceProcess(env, logFile);
    const pid = service.process.pid!;
    const api = new Api(service.baseUrl);
    const apiToken = await api.apiToken(await login(emulator, api, world.operator));
    const userToken = await login(emulator, api, world.user, [
      'identify',
      'guilds',
      'guilds.members.read',
    ]);
    // The membership feed first, as the bot's READY brings it: two shards.
    await api.snapshot(apiToken, 0, world.ingestGuilds);
    await api.snapshot(apiToken, 1, world.probeGuilds);
    inspector = await Inspector.open(pid, service.inspectorPort);

    // The dashboard loop's guilds (shard 1), fed and opened once: the code paths are warm.
    const probeFeed = await ingest(
      service.baseUrl,
      apiToken,
      1,
      world.probeGuilds.map((id) => states.get(id)!),
    );
    if (probeFeed.errors.length > 0) throw new Error(probeFeed.errors.join('\n'));
    for (let round = 0; round < 3; round++) {
      for (const id of world.probeGuilds) await api.openGuild(userToken, id);
    }
    await api.expectLive(apiToken, world.probeGuilds.length, world.ingestGuilds.length);
    const before = await memoryNow(pid, inspector);
    console.log("fed the dashboard loop's guilds; the loop alone…");

    const probe = new ProbeLoop(service.baseUrl, userToken, world.probeGuilds, options.probeRate);
    const postgres = database ? new DatabaseMeter(database) : null;
    await sleep(options.baselineS * 1000);
    const baselineWindow = probe.window();
    console.log(`ingesting ${world.ingestGuilds.length} guilds…`);
    const cpuBefore = cpuSeconds(pid);
    const dbBefore = await postgres?.read();
    const ingestStarted = performance.now();
    const shard = world.ingestGuilds.map((id) => states.get(id)!);
    let figures: IngestFigures | undefined;
    let profile: string | null = null;
    const running = service;
    const work = async (): Promise<void> => {
      figures = await ingest(running.baseUrl, apiToken, 0, shard);
    };
    if (options.profile) {
      const cpu = await profileWhile(pid, running.inspectorPort, work);
      profile = profileMarkdown(
        `The service's CPU during the ingest (${database ? 'PostgreSQL' : 'embedded'})`,
        summariseProfile(cpu, ROOT, 15),
      );
    } else {
      await work();
    }
    if (!figures) throw new Error('the ingest did not run');
    const ingestEnded = performance.now();
    const ingestWindow = probe.window();
    figures.serviceCpuS = cpuSeconds(pid) - cpuBefore;
    figures.wallS = (ingestEnded - ingestStarted) / 1000;
    // A restart: a new stream (a new reporter) sends every guild's whole state again, unchanged.
    console.log('a restart: the same guilds again on a new stream…');
    const restart = await ingest(running.baseUrl, apiToken, 0, shard);
    const restartWindow = probe.window();
    if (restart.errors.length > 0) throw new Error(restart.errors.join('\n'));
    const samples = await probe.stop();
    if (figures.errors.length > 0) throw new Error(figures.errors.join('\n'));
    await api.expectLive(apiToken, world.probeGuilds.length + world.ingestGuilds.length, 0);
    const afterIngest = await memoryNow(pid, inspector);
    if (postgres && dbBefore) {
      // The backends' CPU is read at once; their statistics (active time) once flushed.
      figures.dbCpuS = (await postgres.cpu()) - dbBefore.cpuS;
      await sleep(Math.max(0, STATS_FLUSH_MS - (performance.now() - ingestEnded)));
      figures.dbActiveS = ((await postgres.read()).activeMs - dbBefore.activeMs) / 1000;
    }
    // The floor in the same run, while the service is idle (PostgreSQL: the bench's own client).
    // Twice, the faster kept: a floor is the least the work can cost on this machine now.
    const floor = database ? await fasterFloor(database, figures.bodies) : null;
    console.log('ingested; opening fed guilds to fill the LRU…');

    // Fed guilds opened once each: their states are read from the database into the LRU.
    const step = world.ingestGuilds.length / options.memoryGuilds;
    const opened = Array.from(
      { length: options.memoryGuilds },
      (_, k) => world.ingestGuilds[Math.floor(k * step)],
    );
    const firstOpens = new Map<SizeClass, number[]>(CLASS_ORDER.map((c) => [c, []]));
    let openedJson = 0;
    for (const id of opened) {
      const started = performance.now();
      await api.openGuild(userToken, id);
      firstOpens.get(world.classOf.get(id)!)!.push(performance.now() - started);
      openedJson += jsonLength(states.get(id)!);
    }
    const afterOpens = await memoryNow(pid, inspector);
    inspector.close();
    inspector = null;

    // The embedded database is read once the service has stopped and left it.
    if (!database) await stopServiceProcess(service.process);
    const storage = database
      ? await measureStorage(database.url, world.classOf, states)
      : await measureEmbeddedStorage(dataDir!, world.classOf, states);
    return {
      database: database ? 'postgres' : 'embedded',
      where: database
        ? `PostgreSQL ${await serverVersion(database.url)} at ${new URL(database.url).host}, a database of its own`
        : 'the embedded database (PGlite, in the service process) in a temporary `DATA_DIR`',
      healthyAfterMs: service.healthyAfterMs,
      ingest: figures,
      restart,
      probe: {
        baseline: probeFigures(samples, baselineWindow),
        ingest: probeFigures(samples, ingestWindow),
        restart: probeFigures(samples, restartWindow),
      },
      memory: {
        before,
        afterIngest,
        afterOpens,
        ingested: world.ingestGuilds.length,
        opened: opened.length,
        openedJson,
      },
      storage,
      firstOpens,
      floor,
      profile,
    };
  } catch (error) {
    const tail = (() => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
      } catch {
        return '(no log)';
      }
    })();
    throw new Error(`${(error as Error).message}\n\nThe service's last log lines:\n${tail}`, {
      cause: error,
    });
  } finally {
    inspector?.close();
    if (service) await stopServiceProcess(service.process);
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    rmSync(logFile, { force: true });
  }
}

async function login(
  emulator: PlatformEmulator,
  api: Api,
  userId: string,
  scopes?: string[],
): Promise<string> {
  const code = emulator.issueCode({ userId, redirectUri: REDIRECT, ...(scopes ? { scopes } : {}) });
  const body = (await api.call('POST', '/oauth2', { body: { code, redirect_uri: REDIRECT } })) as {
    token: string;
  };
  return body.token;
}

/** The service's routes this benchmark calls; any other status than 200 or 201 stops it. */
class Api {
  constructor(private readonly baseUrl: string) {}

  call(
    method: string,
    path: string,
    options: { token?: string; body?: object } = {},
  ): Promise<unknown> {
    return callService(this.baseUrl, method, path, options);
  }

  async apiToken(loginToken: string): Promise<string> {
    const body = (await this.call('POST', '/sessions', {
      token: loginToken,
      body: { name: 'bench bot', type: 'api', expiry: 3600 },
    })) as { token: string };
    return body.token;
  }

  async snapshot(apiToken: string, shardId: number, guildIds: string[]): Promise<void> {
    const snapshotAt = new Date().toISOString();
    for (let from = 0; from < guildIds.length; from += 4_000) {
      await this.call('PUT', `/internal/shards/${shardId}/guilds`, {
        token: apiToken,
        body: {
          shard_count: 2,
          snapshot_at: snapshotAt,
          total: guildIds.length,
          guild_ids: guildIds.slice(from, from + 4_000),
        },
      });
    }
  }

  openGuild(token: string, guildId: string): Promise<unknown> {
    return this.call('GET', `/users/@me/guilds/${guildId}`, { token });
  }

  /** Checks that `live` guilds are read from the feed and `missing` have no state yet. */
  async expectLive(apiToken: string, live: number, missing: number): Promise<void> {
    const status = (await this.call('GET', '/internal/guild-state', { token: apiToken })) as {
      live: number;
      behind: Record<string, number>;
    };
    const behind = Object.entries(status.behind).filter(([, n]) => n > 0);
    const expected = missing > 0 ? [['missing', missing]] : [];
    if (status.live !== live || JSON.stringify(behind) !== JSON.stringify(expected)) {
      throw new Error(
        `GET /internal/guild-state: expected ${live} live and ${missing} missing: ${JSON.stringify(status)}`,
      );
    }
  }
}

// --- The ingest ----------------------------------------------------------------------------------

interface BatchFigure {
  ms: number;
  bytes: number;
  reports: number;
}

interface IngestFigures {
  guilds: number;
  /** The reporter's own work before the first send (copies, hashes, serialising). */
  prepareMs: number;
  /** From the first batch sent to the last answer. */
  sendMs: number;
  batches: BatchFigure[];
  /** The bodies sent, as sent: what the floor parses and writes again. */
  bodies: string[];
  errors: string[];
  /** Filled by the caller: the service's CPU over the ingest, and the database's. */
  serviceCpuS: number;
  wallS: number;
  dbCpuS: number | null;
  dbActiveS: number | null;
}

/** Sends these guilds' whole states for the shard, as the bot's reporter does at READY. */
async function ingest(
  baseUrl: string,
  token: string,
  shardId: number,
  guilds: GuildState[],
): Promise<IngestFigures> {
  const batches: BatchFigure[] = [];
  const bodies: string[] = [];
  const errors: string[] = [];
  let firstSend = 0;
  const timed: FetchLike = async (url, init) => {
    const started = performance.now();
    firstSend ||= started;
    const response = await fetch(url, init);
    const text = await response.text();
    const body = typeof init.body === 'string' ? init.body : '';
    bodies.push(body);
    batches.push({
      ms: performance.now() - started,
      bytes: Buffer.byteLength(body),
      reports: body.split('{"seq":').length - 1,
    });
    return new Response(text, { status: response.status, headers: response.headers });
  };
  const reporter = createGuildStateReporter({
    baseUrl,
    token,
    fetch: timed,
    // Sent when a batch is full and by the flush below; no timer or heartbeat in between.
    flushIntervalMs: 3_600_000,
    heartbeatIntervalMs: 3_600_000,
    onError: (error: ReporterError) => errors.push(`${error.kind}: ${error.message}`),
  });
  const started = performance.now();
  for (const state of guilds) reporter.guildCreate(shardId, state);
  const prepared = performance.now();
  await reporter.close();
  const done = performance.now();
  return {
    guilds: guilds.length,
    prepareMs: prepared - started,
    sendMs: done - (firstSend || prepared),
    batches,
    bodies,
    errors,
    serviceCpuS: 0,
    wallS: 0,
    dbCpuS: null,
    dbActiveS: null,
  };
}

/** A process's CPU time (user and system), in seconds, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface FloorFigures {
  /** Parsing every batch body and each guild's state JSON, as a service must at the least. */
  parseMs: number;
  /** One multi-row statement per batch writing the same rows. */
  writeMs: number;
}

async function fasterFloor(database: BenchDatabase, bodies: string[]): Promise<FloorFigures> {
  const [a, b] = [await measureFloor(database, bodies), await measureFloor(database, bodies)];
  return a.parseMs + a.writeMs <= b.parseMs + b.writeMs ? a : b;
}

/**
 * The floor of an ingest, measured in the same run: the same bytes parsed (each batch body, then
 * each guild's state serialised again for its row) and the same rows written, one multi-row
 * statement per batch (the service's own: a JSON document of the rows), into a table like
 * `bot_guild_states`, on one connection with nothing else to do: no HTTP, no validation, no
 * hashing, no ordering rules.
 */
async function measureFloor(database: BenchDatabase, bodies: string[]): Promise<FloorFigures> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('CREATE TABLE floor_states (LIKE bot_guild_states INCLUDING ALL)');
    let parseMs = 0;
    let writeMs = 0;
    for (const body of bodies) {
      const started = performance.now();
      const batch = JSON.parse(body) as {
        reports: { guild_id: string; guild?: GuildState; hash?: string }[];
      };
      const reports = batch.reports.filter((report) => report.guild !== undefined);
      // The rows as one JSON document, each state serialised once: the service's own statement.
      const rows = reports.map((report) => {
        const state = JSON.stringify(report.guild);
        return `{"guild_id":${JSON.stringify(report.guild_id)},"state":${state},"hash":${JSON.stringify(report.hash ?? '')},"bytes":${state.length}}`;
      });
      const document = `[${rows.join(',')}]`;
      const parsed = performance.now();
      await client.query(
        `INSERT INTO floor_states (guild_id, shard_id, stream_id, state, deleted_ids, hash, drifted,
           unavailable, reported_at, bytes, version)
         SELECT r.guild_id, 0, 'floor', r.state, '[]'::jsonb, r.hash, false, false, now(), r.bytes,
           0
         FROM json_to_recordset($1::json) AS r(guild_id varchar, state jsonb, hash varchar,
           bytes int)
         ON CONFLICT (guild_id) DO UPDATE SET state = EXCLUDED.state`,
        [document],
      );
      parseMs += parsed - started;
      writeMs += performance.now() - parsed;
    }
    return { parseMs, writeMs };
  } finally {
    await client.query('DROP TABLE IF EXISTS floor_states');
    await client.end();
  }
}

/**
 * The bench database's time as PostgreSQL counts it (`pg_stat_database.active_time`: statements
 * running, flushed by the backends within seconds) and its backends' CPU (from /proc, when the
 * server runs on this machine).
 */
class DatabaseMeter {
  private readonly name: string;

  constructor(database: BenchDatabase) {
    this.name = new URL(database.url).pathname.slice(1);
  }

  async read(): Promise<{ activeMs: number; cpuS: number }> {
    return { activeMs: await this.activeMs(), cpuS: await this.cpu() };
  }

  private async activeMs(): Promise<number> {
    return this.query(async (client) => {
      const { rows } = await client.query<{ active_time: number }>(
        'SELECT active_time FROM pg_stat_database WHERE datname = $1',
        [this.name],
      );
      return Number(rows[0]?.active_time ?? Number.NaN);
    });
  }

  /** The CPU seconds of the database's backends now (those that ended are not counted). */
  async cpu(): Promise<number> {
    const pids = await this.query(async (client) => {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1',
        [this.name],
      );
      return rows.map((row) => row.pid);
    });
    return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  }

  private async query<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ connectionString: BENCH_ADMIN_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
}

// --- The dashboard loop --------------------------------------------------------------------------

interface ProbeSample {
  /** Epoch ms the request started. */
  at: number;
  ms: number;
  ok: boolean;
}

interface ProbeWindow {
  from: number;
  to: number;
}

interface ProbeFigures {
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

/** `GET /users/@me/guilds/{id}` at a fixed rate, round the guilds, from a worker thread. */
class ProbeLoop {
  private readonly worker: Worker;
  private last = epochMs();

  constructor(baseUrl: string, token: string, guildIds: string[], rate: number) {
    this.worker = new Worker(__filename, { workerData: { baseUrl, token, guildIds, rate } });
  }

  /** The span since the last window ended (or the loop started). */
  window(): ProbeWindow {
    const now = epochMs();
    const window = { from: this.last, to: now };
    this.last = now;
    return window;
  }

  async stop(): Promise<ProbeSample[]> {
    const samples = new Promise<ProbeSample[]>((resolve, reject) => {
      this.worker.once('message', resolve);
      this.worker.once('error', reject);
    });
    this.worker.postMessage('stop');
    const result = await samples;
    await this.worker.terminate();
    return result;
  }
}

/** The worker's side: opens a guild every 1/rate s without waiting for the one before. */
async function probeWorker(data: {
  baseUrl: string;
  token: string;
  guildIds: string[];
  rate: number;
}): Promise<void> {
  const samples: ProbeSample[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  parentPort!.once('message', () => (stopping = true));
  const interval = 1000 / data.rate;
  const start = performance.now();
  for (let n = 0; !stopping; n++) {
    const wait = start + n * interval - performance.now();
    if (wait > 0) await sleep(wait);
    // A loop that falls far behind waits for its requests instead of piling them up.
    if (inFlight.size >= 32) await Promise.race(inFlight);
    const at = epochMs();
    const started = performance.now();
    const id = data.guildIds[n % data.guildIds.length];
    const request: Promise<void> = fetch(`${data.baseUrl}/users/@me/guilds/${id}`, {
      headers: { Authorization: `Bearer ${data.token}` },
    })
      .then(async (response) => {
        await response.arrayBuffer();
        samples.push({ at, ms: performance.now() - started, ok: response.status === 200 });
      })
      .catch(() => {
        samples.push({ at, ms: performance.now() - started, ok: false });
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  }
  await Promise.all(inFlight);
  parentPort!.postMessage(samples);
}

function probeFigures(samples: ProbeSample[], window: ProbeWindow): ProbeFigures {
  const inside = samples.filter((s) => s.at >= window.from && s.at < window.to);
  const ms = inside.filter((s) => s.ok).map((s) => s.ms);
  return {
    requests: inside.length,
    errors: inside.filter((s) => !s.ok).length,
    p50: quantile(ms, 0.5),
    p99: quantile(ms, 0.99),
    max: ms.length > 0 ? Math.max(...ms) : Number.NaN,
  };
}

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

// --- Memory --------------------------------------------------------------------------------------

interface MemorySnapshot {
  rssMb: number;
  heapUsedBytes: number;
  externalBytes: number;
}

interface MemoryFigures {
  before: MemorySnapshot;
  afterIngest: MemorySnapshot;
  afterOpens: MemorySnapshot;
  ingested: number;
  opened: number;
  /** The JSON length of the opened guilds' states: what the LRU counts. */
  openedJson: number;
}

/** The service's memory after a full collection (through its inspector). */
async function memoryNow(pid: number, inspector: Inspector): Promise<MemorySnapshot> {
  await inspector.send('HeapProfiler.collectGarbage');
  await inspector.send('HeapProfiler.collectGarbage');
  const { result } = (await inspector.send('Runtime.evaluate', {
    expression: 'JSON.stringify(process.memoryUsage())',
  })) as { result: { value: string } };
  const usage = JSON.parse(result.value) as NodeJS.MemoryUsage;
  return {
    rssMb: residentMemory(pid).rssMb,
    heapUsedBytes: usage.heapUsed,
    externalBytes: usage.external + usage.arrayBuffers,
  };
}

/** A session with a running service's inspector, opened once (SIGUSR1) and kept for the run. */
class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event: { data: string }) => {
      const message = JSON.parse(event.data) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.pending.get(message.id)?.(message.result);
    });
  }

  static async open(pid: number, port: number): Promise<Inspector> {
    process.kill(pid, 'SIGUSR1');
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        if (targets[0]) {
          const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
          await new Promise((resolve, reject) => {
            socket.addEventListener('open', resolve, { once: true });
            socket.addEventListener('error', reject, { once: true });
          });
          return new Inspector(socket);
        }
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`no inspector answered on port ${port}`);
  }

  send(method: string, params: object = {}): Promise<unknown> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, resolve);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** What the service's structures hold, measured on copies built here with the same code. */
interface ShapeFigures {
  /** Per guild: one entry of GuildStateService's facts map, from rows as `pg` hands them over. */
  factsBytes: number;
  byClass: Map<SizeClass, { json: number; entry: number; context: number; count: number }>;
}

let collect: () => void = () => undefined;

/** A full collection on demand in this process (`--expose-gc` without restarting Node.js). */
function enableGc(): void {
  setFlagsFromString('--expose-gc');
  collect = runInNewContext('gc') as () => void;
}

function heapUsed(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

/**
 * The bytes of the structures a fed guild costs an instance, built here as the service builds
 * them: a row's facts (GuildStateService.metas), an LRU entry (`platformShapes` of the state as
 * `pg` parses it from the row, with its version and JSON length), and a guild context with the
 * bot's permissions in every channel computed (GuildAccessService keeps the last one of up to
 * 1,000 guilds, the guild info computes them all).
 */
function measureShapes(world: World, states: Map<string, GuildState>): ShapeFigures {
  // Facts: strings made one by one from bytes, as the driver makes them, never interned.
  const text = (value: string): string => Buffer.from(value).toString();
  const streamId = 'c0ffee00-0000-4000-8000-000000000000';
  const factsCount = EXTRAPOLATE_TO;
  const baseline = heapUsed();
  const metas = new Map<string, object>();
  for (let i = 0; i < factsCount; i++) {
    const id = text(guildId(i, 0));
    metas.set(id, {
      guildId: id,
      shardId: 0,
      streamId: text(streamId),
      drifted: false,
      unavailable: false,
      version: Number(text(String(1_000_000 + i))),
    });
  }
  const factsBytes = (heapUsed() - baseline) / factsCount;
  metas.clear();

  const byClass = new Map<
    SizeClass,
    { json: number; entry: number; context: number; count: number }
  >();
  for (const sizeClass of CLASS_ORDER) {
    const ids = world.ingestGuilds.filter((id) => world.classOf.get(id) === sizeClass);
    if (ids.length === 0) continue;
    const texts = Array.from({ length: SHAPES_PER_CLASS }, (_, i) =>
      JSON.stringify(states.get(ids[i % ids.length])!),
    );
    const json = texts.reduce((sum, t) => sum + t.length, 0) / texts.length;
    let before = heapUsed();
    const entries = texts.map((t, i) => ({
      version: i,
      bytes: t.length,
      ...platformShapes(JSON.parse(t) as GuildState),
    }));
    const entry = (heapUsed() - before) / entries.length;
    before = heapUsed();
    const now = new Date();
    const contexts = entries.map((fed) => {
      const context = new GuildContext(
        fed.guild,
        [...fed.channels, ...fed.threads],
        fed.botMember,
        now,
      );
      for (const channel of context.channels) context.bot.permissionsIn(channel);
      return context;
    });
    const context = (heapUsed() - before) / contexts.length;
    byClass.set(sizeClass, { json, entry, context, count: entries.length });
    entries.length = 0;
    contexts.length = 0;
  }
  return { factsBytes, byClass };
}

// --- Storage -------------------------------------------------------------------------------------

interface StorageFigures {
  rows: number;
  totalBytes: number;
  heapBytes: number;
  toastBytes: number;
  indexBytes: number;
  /** Per class: rows, the stored bytes of their values, and their states' JSON length. */
  byClass: Map<SizeClass, { rows: number; stored: number; json: number }>;
}

async function measureStorage(
  url: string,
  classOf: Map<string, SizeClass>,
  states: Map<string, GuildState>,
): Promise<StorageFigures> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    // The restart's ingest rewrote every row's facts: what a guild takes is measured compacted.
    await client.query('VACUUM FULL bot_guild_states');
    const sizes = await client.query<{
      total: string;
      heap: string;
      toast: string;
      indexes: string;
      rows: number;
    }>(
      `SELECT pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS heap,
         COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS toast,
         pg_indexes_size(c.oid) AS indexes,
         (SELECT count(*)::int FROM bot_guild_states) AS rows
       FROM pg_class c WHERE c.oid = 'bot_guild_states'::regclass`,
    );
    const perRow = await client.query<{ guild_id: string; stored: number }>(
      `SELECT guild_id, pg_column_size(state) + pg_column_size(deleted_ids) AS stored
         FROM bot_guild_states`,
    );
    const byClass = new Map<SizeClass, { rows: number; stored: number; json: number }>();
    for (const row of perRow.rows) {
      const sizeClass = classOf.get(row.guild_id);
      if (!sizeClass) continue;
      const figures = byClass.get(sizeClass) ?? { rows: 0, stored: 0, json: 0 };
      figures.rows += 1;
      figures.stored += Number(row.stored);
      figures.json += jsonLength(states.get(row.guild_id)!);
      byClass.set(sizeClass, figures);
    }
    const [size] = sizes.rows;
    return {
      rows: size.rows,
      totalBytes: Number(size.total),
      heapBytes: Number(size.heap),
      toastBytes: Number(size.toast),
      indexBytes: Number(size.indexes),
      byClass,
    };
  } finally {
    await client.end();
  }
}

/** The embedded database's sizes, read once the service has stopped and left its directory. */
async function measureEmbeddedStorage(
  dataDir: string,
  classOf: Map<string, SizeClass>,
  states: Map<string, GuildState>,
): Promise<StorageFigures> {
  const embedded = await EmbeddedPostgres.start(join(dataDir, 'pglite'));
  try {
    return await measureStorage(embedded.url, classOf, states);
  } finally {
    await embedded.stop();
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0].server_version.split(' ')[0];
  } finally {
    await client.end();
  }
}

// --- The report ----------------------------------------------------------------------------------

function report(
  options: Options,
  world: World,
  jsonBytes: Map<string, number>,
  shapes: ShapeFigures,
  runs: BackendRun[],
  skipped: string[],
): string {
  const count = (sizeClass: SizeClass): number =>
    world.ingestGuilds.filter((id) => world.classOf.get(id) === sizeClass).length;
  const jsonOf = (sizeClass: SizeClass): number =>
    mean(
      world.ingestGuilds
        .filter((id) => world.classOf.get(id) === sizeClass)
        .map((id) => jsonBytes.get(id)!),
    );
  const totalJson = world.ingestGuilds.reduce((sum, id) => sum + jsonBytes.get(id)!, 0);
  const lines = [
    '# Guild-state feed: ingest, storage and memory',
    '',
    `\`npm run bench:guild-state\`, ${new Date().toISOString()}.`,
    '',
    `- Service: ${versionLine()}, Node.js ${process.version}; the built service as \`npm start\` runs it, live mode against an emulator in the benchmark's process (answering at once), rate limits off, \`PLATFORM_CACHE_TTL=${PLATFORM_CACHE_TTL_S}\`, \`GUILD_STATE_CACHE_MB\` ${DEFAULT_CACHE_MB} (the default). Machine: ${machineLine()}.`,
    `- The shard: ${world.ingestGuilds.length} guilds (shard 0 of 2), ${mib(totalJson)} MiB of state JSON; the dashboard loop's ${world.probeGuilds.length} guilds on shard 1, fed before. The membership feed holds all of them before anything is measured.`,
    ...runs.map(
      (run) =>
        `- ${run.database}: ${run.where}; the service healthy ${ms(run.healthyAfterMs)} ms after its start.`,
    ),
    ...skipped.map((line) => `- ${line}`),
    '',
    '| size class | guilds | state JSON, mean |',
    '| --- | --- | --- |',
    ...CLASS_ORDER.filter((c) => count(c) > 0).map(
      (c) => `| ${SIZE_CLASSES[c].label} | ${count(c)} | ${bytes(jsonOf(c))} |`,
    ),
    '',
    "## Ingest: the shard's whole state at once",
    '',
    `The bot's reporter (\`createGuildStateReporter\`) is given every guild's \`guild_create\` and cuts batches (at most 1 MiB and 1,000 reports), sent one at a time as it does. Meanwhile the dashboard loop opens a guild of the other shard ${options.probeRate} times a second (\`GET /users/@me/guilds/{id}\`, their state held, the user's member cached), from a worker thread; the baseline is the same loop alone for ${options.baselineS} s just before.`,
    '',
    `| | ${runs.map((run) => run.database).join(' | ')} |`,
    `| --- | ${runs.map(() => '---').join(' | ')} |`,
    row(
      'reporter: preparing the reports (copies, hashes, JSON)',
      runs,
      (r) => `${ms(r.ingest.prepareMs)} ms`,
    ),
    row(
      'sending: first batch to last answer',
      runs,
      (r) => `${(r.ingest.sendMs / 1000).toFixed(2)} s`,
    ),
    row(
      'guilds a second (sending)',
      runs,
      (r) => `${Math.round(r.ingest.guilds / (r.ingest.sendMs / 1000))}`,
    ),
    row(
      'batches; bytes sent',
      runs,
      (r) => `${r.ingest.batches.length}; ${mib(sum(r.ingest.batches.map((b) => b.bytes)))} MiB`,
    ),
    row(
      'reports per batch: min–max',
      runs,
      (r) =>
        `${Math.min(...r.ingest.batches.map((b) => b.reports))}–${Math.max(...r.ingest.batches.map((b) => b.reports))}`,
    ),
    row('batch latency p50 / p99 / max', runs, (r) => {
      const times = r.ingest.batches.map((b) => b.ms);
      return `${ms(quantile(times, 0.5))} / ${ms(quantile(times, 0.99))} / ${ms(Math.max(...times))} ms`;
    }),
    row(
      'floor, same run: the same bytes parsed; the same rows written (one statement a batch)',
      runs,
      (r) =>
        r.floor === null
          ? 'PostgreSQL only'
          : `${((r.floor.parseMs + r.floor.writeMs) / 1000).toFixed(2)} s (parse ${ms(r.floor.parseMs)} ms, write ${ms(r.floor.writeMs)} ms)`,
    ),
    row('sending ÷ floor', runs, (r) =>
      r.floor === null
        ? '–'
        : `${(r.ingest.sendMs / (r.floor.parseMs + r.floor.writeMs)).toFixed(1)}×`,
    ),
    row(
      'a restart: the same guilds on a new stream, unchanged: sending',
      runs,
      (r) =>
        `${(r.restart.sendMs / 1000).toFixed(2)} s (${Math.round(r.restart.guilds / (r.restart.sendMs / 1000))} guilds/s)`,
    ),
    row('… its batch latency p50 / p99 ms', runs, (r) => {
      const times = r.restart.batches.map((b) => b.ms);
      return `${ms(quantile(times, 0.5))} / ${ms(quantile(times, 0.99))}`;
    }),
    row('… ÷ floor', runs, (r) =>
      r.floor === null
        ? '–'
        : `${(r.restart.sendMs / (r.floor.parseMs + r.floor.writeMs)).toFixed(1)}×`,
    ),
    row('dashboard loop during the restart', runs, (r) => probeCell(r.probe.restart)),
    row(
      '… p99 during ÷ alone',
      runs,
      (r) => `${(r.probe.restart.p99 / r.probe.baseline.p99).toFixed(1)}×`,
    ),
    row(
      'per guild (sending ÷ guilds)',
      runs,
      (r) => `${(r.ingest.sendMs / r.ingest.guilds).toFixed(2)} ms`,
    ),
    row(
      'service CPU over the ingest (÷ its wall time)',
      runs,
      (r) =>
        `${r.ingest.serviceCpuS.toFixed(2)} s (${Math.round((100 * r.ingest.serviceCpuS) / r.ingest.wallS)}%)`,
    ),
    row("database: backends' CPU; active time", runs, (r) =>
      r.ingest.dbCpuS === null
        ? "in the service's CPU (PGlite runs in its thread)"
        : `${r.ingest.dbCpuS.toFixed(2)} s; ${(r.ingest.dbActiveS ?? Number.NaN).toFixed(2)} s`,
    ),
    row('dashboard loop alone: requests, p50 / p99 / max', runs, (r) =>
      probeCell(r.probe.baseline),
    ),
    row('dashboard loop during the ingest', runs, (r) => probeCell(r.probe.ingest)),
    row(
      '… p99 during ÷ alone',
      runs,
      (r) => `${(r.probe.ingest.p99 / r.probe.baseline.p99).toFixed(1)}×`,
    ),
    '',
    '"Active time": `pg_stat_database.active_time` of the bench database over the ingest (statements running, as PostgreSQL counts them; it includes the loop\'s own, which hit no table once the states are held). A batch\'s p99 over this few batches is close to its max.',
    '',
    "The first open of a fed guild after the ingest (its state read from the database into the LRU, the user's member from the emulator at once), ms p50 / max by class:",
    '',
    `| size class | ${runs.map((run) => run.database).join(' | ')} |`,
    `| --- | ${runs.map(() => '---').join(' | ')} |`,
    ...CLASS_ORDER.filter((c) => runs.some((r) => r.firstOpens.get(c)!.length > 0)).map(
      (c) =>
        `| ${c} | ${runs
          .map((r) => {
            const times = r.firstOpens.get(c)!;
            return `${ms(quantile(times, 0.5))} / ${ms(Math.max(...times))} (${times.length})`;
          })
          .join(' | ')} |`,
    ),
    '',
    '## Storage per guild',
    '',
    "`bot_guild_states` after the ingest and the restart's (every guild of both shards), compacted first (`VACUUM FULL`: the restart rewrote every row's facts). \"Stored\" is `pg_column_size` of the state and the deleted ids (jsonb, compressed and moved out of line past about 2 KB); each row's share of the rest (row headers, the other columns, the primary key and the version index, page space) is the table's total less the stored values, divided by the rows.",
    '',
  ];
  for (const run of runs) {
    const s = run.storage;
    const storedTotal = sum([...s.byClass.values()].map((c) => c.stored));
    const overhead = (s.totalBytes - storedTotal) / s.rows;
    lines.push(
      `**${run.database}**: ${s.rows} rows, ${mib(s.totalBytes)} MiB in all (table ${mib(s.heapBytes)}, TOAST ${mib(s.toastBytes)}, indexes ${mib(s.indexBytes)}), ${bytes(s.totalBytes / s.rows)} a guild; ${EXTRAPOLATE_TO.toLocaleString('en-US')} guilds of this mix: ${mib((s.totalBytes / s.rows) * EXTRAPOLATE_TO)} MiB.`,
      '',
      '| size class | state JSON | stored | + row share | per guild | ÷ JSON |',
      '| --- | --- | --- | --- | --- | --- |',
      ...CLASS_ORDER.filter((c) => s.byClass.has(c)).map((c) => {
        const figures = s.byClass.get(c)!;
        const stored = figures.stored / figures.rows;
        const text = figures.json / figures.rows;
        return `| ${c} | ${bytes(text)} | ${bytes(stored)} | ${bytes(overhead)} | ${bytes(stored + overhead)} | ${((stored + overhead) / text).toFixed(2)} |`;
      }),
      '',
    );
  }
  const mixJson = totalJson / world.ingestGuilds.length;
  const mixEntry =
    sum(CLASS_ORDER.map((c) => count(c) * (shapes.byClass.get(c)?.entry ?? 0))) /
    world.ingestGuilds.length;
  const ratio = mixEntry / mixJson;
  lines.push(
    '## Memory per guild',
    '',
    "The service's resident memory (RSS) and V8 heap in use after a full collection (through its inspector, opened before the first reading): before the ingest (the loop's guilds fed and held), after it (each instance keeps every fed guild's facts), and after opening fed guilds once each (their states in the LRU, their guild contexts and the user's member lookups kept meanwhile).",
    '',
    `| | ${runs.map((run) => run.database).join(' | ')} |`,
    `| --- | ${runs.map(() => '---').join(' | ')} |`,
    row('before the ingest: RSS; heap', runs, (r) => memoryCell(r.memory.before)),
    row('after the ingest', runs, (r) => memoryCell(r.memory.afterIngest)),
    row(
      'heap growth per ingested guild (its facts, and code compiled meanwhile)',
      runs,
      (r) =>
        `${bytes((r.memory.afterIngest.heapUsedBytes - r.memory.before.heapUsedBytes) / r.memory.ingested)}`,
    ),
    row(
      'after opening fed guilds',
      runs,
      (r) =>
        `${memoryCell(r.memory.afterOpens)} (${r.memory.opened} guilds, ${mib(r.memory.openedJson)} MiB of JSON)`,
    ),
    row('heap per opened guild; ÷ its JSON', runs, (r) => {
      const perGuild =
        (r.memory.afterOpens.heapUsedBytes - r.memory.afterIngest.heapUsedBytes) / r.memory.opened;
      return `${bytes(perGuild)}; ${((perGuild * r.memory.opened) / r.memory.openedJson).toFixed(1)}×`;
    }),
    '',
    "The same structures built in the benchmark's process with the service's code, heap after a full collection, per guild:",
    '',
    `- A guild's facts (an entry of \`GuildStateService\`'s map, from strings as the driver makes them): **${bytes(shapes.factsBytes)}**; ${EXTRAPOLATE_TO.toLocaleString('en-US')} guilds: ${mib(shapes.factsBytes * EXTRAPOLATE_TO)} MiB on every instance.`,
    '',
    '| size class | state JSON (what the LRU counts) | LRU entry (`platformShapes` of the parsed row) | ÷ JSON | guild context, bot permissions computed |',
    '| --- | --- | --- | --- | --- |',
    ...CLASS_ORDER.filter((c) => shapes.byClass.has(c)).map((c) => {
      const figures = shapes.byClass.get(c)!;
      return `| ${c} | ${bytes(figures.json)} | ${bytes(figures.entry)} | ${(figures.entry / figures.json).toFixed(1)}× | ${bytes(figures.context)} |`;
    }),
    '',
    `For this mix an LRU entry holds ${ratio.toFixed(1)}× its JSON length: \`GUILD_STATE_CACHE_MB=${DEFAULT_CACHE_MB}\` (${DEFAULT_CACHE_MB} MiB of JSON, about ${Math.round((DEFAULT_CACHE_MB * 2 ** 20) / mixJson).toLocaleString('en-US')} guilds of the mix) holds about ${Math.round(DEFAULT_CACHE_MB * ratio)} MiB of heap when full.`,
  );
  for (const run of runs) if (run.profile) lines.push('', run.profile);
  return `${lines.join('\n')}\n`;
}

function row(title: string, runs: BackendRun[], cell: (run: BackendRun) => string): string {
  return `| ${title} | ${runs.map(cell).join(' | ')} |`;
}

function probeCell(figures: ProbeFigures): string {
  return `${figures.requests}${figures.errors > 0 ? ` (${figures.errors} failed)` : ''}, ${ms(figures.p50)} / ${ms(figures.p99)} / ${ms(figures.max)} ms`;
}

function memoryCell(snapshot: MemorySnapshot): string {
  return `${snapshot.rssMb} MiB; ${mib(snapshot.heapUsedBytes)} MiB`;
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function mean(values: number[]): number {
  return values.length === 0 ? Number.NaN : sum(values) / values.length;
}

function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function mib(value: number): string {
  return (value / 2 ** 20).toFixed(1);
}

/** Bytes as `850 B`, `12.3 KB`. */
function bytes(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} KB` : `${Math.round(value)} B`;
}

function jsonLength(state: GuildState): number {
  return JSON.stringify(state).length;
}

function machineLine(): string {
  const cpus = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? 0;
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return `${cpus} CPUs, load average at the end ${load}`;
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

if (isMainThread) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
} else {
  void probeWorker(
    workerData as { baseUrl: string; token: string; guildIds: string[]; rate: number },
  );
}
