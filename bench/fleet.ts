import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { proxyRequests } from '@discordjs/proxy';
import { REST } from '@discordjs/rest';
import { ChannelType, PermissionFlagsBits as P, type APIUser } from 'discord-api-types/v10';
import { DEMO_SEED, EVERYONE_DEFAULT } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed, SeedGuild } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator, type EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { BENCH_ADMIN_URL, freshPostgresDatabase } from './database';
import { integer } from './options';
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
 * buckets, 429 bodies and headers) and a latency on every answer (default 100 ms). The instances
 * (default 3) run on one PostgreSQL database and one Redis, and learn the bot's guilds (default
 * 10,000) through the membership feed, as the bot reports them. Simulated dashboard users (default
 * 1,000), started evenly over the run (default 2 minutes), each log in, list their guilds, open a
 * guild nobody opened yet, one someone did, and an invented id, follow one of their guilds' event
 * stream, view its settings and change one, and wait for the change on the stream. Requests go to
 * the instances in turn.
 *
 * It runs twice: each instance calling the platform itself, then every bot-token call through one
 * `@discordjs/proxy` (configured as its container is). For each run it prints what the platform
 * would have seen (429s, global and per route; invalid answers against the address's budget),
 * platform calls per user action, each step's p50 and p99, and every error a user saw.
 *
 * Needs PostgreSQL and Redis: a database of its own is created on BENCH_DATABASE_URL's server
 * (bench/database.ts) and dropped after each run.
 */

const USAGE = `npm run bench:fleet -- [options]

  --instances=<n>     service instances (env FLEET_INSTANCES; default 3)
  --guilds=<n>        guilds of the bot (env FLEET_GUILDS; default 10000)
  --users=<n>         simulated dashboard users (env FLEET_USERS; default 1000)
  --duration-s=<s>    the users start evenly over this time (env FLEET_DURATION_S; default 120)
  --latency-ms=<ms>   platform latency added to every answer (env FLEET_LATENCY_MS; default 100)
  --proxy=both|off|on run without the REST proxy, with it, or both (env FLEET_PROXY; default both)
  --write             also write the report to bench/fleet-results.md
  --help              this text

  BENCH_DATABASE_URL  PostgreSQL, where a database of the run's own is made (default postgres://postgres@127.0.0.1:5432/postgres)
  FLEET_REDIS_URL     Redis (default redis://127.0.0.1:6379)`;

interface Options {
  instances: number;
  guilds: number;
  users: number;
  durationS: number;
  latencyMs: number;
  runs: ('off' | 'on')[];
  write: boolean;
  redisUrl: string;
}

const REDIRECT = 'http://localhost:3000/docs/oauth2-redirect.html';
/** A fixed key: every instance of a run must decrypt the grants the others stored. */
const TOKEN_ENCRYPTION_KEY = Buffer.alloc(32, 11).toString('base64');
/** Guild ids per membership-feed part (the service takes up to 4,000). */
const FEED_PART = 4_000;
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

const GUILD_BASE = 1_200_000_000_000_000_000n;
const USER_BASE = 1_300_000_000_000_000_000n;
/** Ids no guild has: the invented ids users open. */
const INVENTED_BASE = 1_400_000_000_000_000_000n;

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
  seed: EmulatorSeed;
  botId: string;
  operator: string;
  users: string[];
  /** Per user: the guilds it is a member of (owned ones first). */
  guildsOf: Map<string, string[]>;
  /** Per user: the guild it owns, opens cold, follows and changes (the first of its guilds). */
  ownedBy: Map<string, string>;
  guildIds: string[];
}

interface StepResult {
  step: Step;
  ms: number;
  /** What went wrong, as the user saw it; null when the step did what it should. */
  error: string | null;
}

interface RunReport {
  proxy: 'off' | 'on';
  results: StepResult[];
  /** The emulator's request log for the users' part of the run. */
  requests: EmulatedRequest[];
  invalidAnswers: number;
  durationS: number;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const world = buildWorld(options);
  const reports: RunReport[] = [];
  for (const proxy of options.runs) {
    console.log(
      `\n=== run ${reports.length + 1}: ${proxy === 'on' ? 'with' : 'without'} the REST proxy`,
    );
    reports.push(await run(options, world, proxy));
  }
  const markdown = report(options, reports);
  console.log(`\n${markdown}`);
  if (options.write) writeFileSync(join(ROOT, 'bench', 'fleet-results.md'), markdown);
}

// --- Options -------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const values = new Map<string, string>();
  for (const arg of args) {
    if (arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument "${arg}"\n\n${USAGE}`);
    values.set(match[1], match[2] ?? 'true');
  }
  const known = ['instances', 'guilds', 'users', 'duration-s', 'latency-ms', 'proxy', 'write'];
  for (const name of values.keys()) {
    if (!known.includes(name)) throw new Error(`unknown option --${name}\n\n${USAGE}`);
  }
  const value = (name: string, variable: string, fallback: string): string =>
    values.get(name) ?? env[variable] ?? fallback;
  const proxy = value('proxy', 'FLEET_PROXY', 'both');
  if (!['both', 'off', 'on'].includes(proxy)) {
    throw new Error(`--proxy must be both, off or on, not "${proxy}"`);
  }
  return {
    instances: integer('--instances', value('instances', 'FLEET_INSTANCES', '3'), 1),
    guilds: integer('--guilds', value('guilds', 'FLEET_GUILDS', '10000'), 10),
    users: integer('--users', value('users', 'FLEET_USERS', '1000'), 1),
    durationS: integer('--duration-s', value('duration-s', 'FLEET_DURATION_S', '120'), 1),
    latencyMs: integer('--latency-ms', value('latency-ms', 'FLEET_LATENCY_MS', '100'), 0),
    runs: proxy === 'both' ? ['off', 'on'] : [proxy as 'off' | 'on'],
    write: values.has('write'),
    redisUrl: env.FLEET_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}

// --- The world -----------------------------------------------------------------------------------

function buildWorld(options: Options): World {
  const botId = DEMO_SEED.application.id;
  const bot = DEMO_SEED.users.find((user) => user.id === botId);
  if (!bot) throw new Error('the demo seed has no bot user');
  const users = Array.from({ length: options.users }, (_, i) => (USER_BASE + BigInt(i)).toString());
  const operator = (USER_BASE + 999_999n).toString();
  const guildsOf = new Map<string, string[]>(users.map((id) => [id, []]));
  const ownedBy = new Map<string, string>();
  const guilds: SeedGuild[] = [];
  // A fixed sequence: every run of the benchmark has the same world.
  let state = 0x2545f491;
  const random = (n: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  for (let g = 0; g < options.guilds; g++) {
    const id = (GUILD_BASE + BigInt(g) * 100n).toString();
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
    guilds.push(guild(id, owner, [...members], botId));
  }
  const user = (id: string, username: string): APIUser => ({
    id,
    username,
    global_name: null,
    discriminator: '0',
    avatar: null,
  });
  return {
    seed: {
      application: DEMO_SEED.application,
      users: [bot, user(operator, 'operator'), ...users.map((id, i) => user(id, `user${i}`))],
      guilds,
    },
    botId,
    operator,
    users,
    guildsOf,
    ownedBy,
    guildIds: guilds.map((g) => g.id),
  };
}

function guild(id: string, owner: string, members: string[], botId: string): SeedGuild {
  const at = (n: number): string => (BigInt(id) + BigInt(n)).toString();
  const joined = '2024-01-01T00:00:00.000Z';
  return {
    id,
    name: `guild ${id.slice(-7)}`,
    icon: null,
    owner_id: owner,
    roles: [
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
    ],
    channels: [
      { id: at(10), type: ChannelType.GuildText, name: 'general', position: 0 },
      { id: at(11), type: ChannelType.GuildText, name: 'mod-log', position: 1 },
    ],
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

async function run(options: Options, world: World, proxy: 'off' | 'on'): Promise<RunReport> {
  const database = await freshPostgresDatabase('bms_fleet');
  if (!database) throw new Error(`PostgreSQL cannot be reached at ${BENCH_ADMIN_URL}`);
  const emulator = await PlatformEmulator.start(
    world.seed,
    {},
    { maxLoggedRequests: 10_000_000, rateLimits: {} },
  );
  const proxyServer = proxy === 'on' ? await startProxy(emulator.apiUrl) : null;
  const services: ServiceProcess[] = [];
  try {
    const env: Record<string, string> = {
      DATABASE_URL: database.url,
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: `fleet-${randomBytes(4).toString('hex')}:`,
      TOKEN_ENCRYPTION_KEY,
      DISCORD_BOT_TOKEN: world.seed.application.bot_token,
      DISCORD_CLIENT_ID: world.seed.application.id,
      DISCORD_CLIENT_SECRET: world.seed.application.secret,
      DISCORD_API_URL: emulator.apiUrl,
      ROOT_USERS: world.operator,
      LOG_LEVEL: 'warn',
      ...(proxyServer ? { DISCORD_REST_PROXY_URL: proxyServer.url } : {}),
    };
    // The first instance migrates the new database; the others start on it together.
    const logs = mkdtempSync(join(tmpdir(), `bms-fleet-${proxy}-`));
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
    // From here on, every platform answer takes the latency.
    if (options.latencyMs > 0) {
      emulator.intercept(async (_route, _reply, signal) => {
        await sleep(options.latencyMs, undefined, { signal });
      });
    }
    const firstRequest = emulator.requests.length;
    const invalidBefore = emulator.invalidAnswers();
    const started = performance.now();
    // The bot keeps reporting while it runs, so the service keeps trusting its feed.
    const heartbeat = setInterval(() => {
      void fleet
        .request('POST', '/internal/shards/0/guild-events', {
          token: botToken,
          body: { events: [] },
        })
        .then((answer) => {
          if (answer.status !== 200) console.error(`the bot's heartbeat answered ${answer.status}`);
        });
    }, BOT_HEARTBEAT_MS);
    let results: StepResult[];
    try {
      results = await simulateUsers(fleet, emulator, world, options);
    } finally {
      clearInterval(heartbeat);
    }
    return {
      proxy,
      results,
      requests: emulator.requests.slice(firstRequest),
      invalidAnswers: emulator.invalidAnswers() - invalidBefore,
      durationS: (performance.now() - started) / 1000,
    };
  } finally {
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

  constructor(private readonly baseUrls: string[]) {}

  async request(
    method: string,
    path: string,
    options: { token?: string; body?: object; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const baseUrl = this.baseUrls[this.next++ % this.baseUrls.length];
    return fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(options.body ? { 'Content-Type': 'application/json' } : {}),
        ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      },
      body: options.body ? JSON.stringify(options.body) : undefined,
      signal: options.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  }
}

async function login(fleet: Fleet, emulator: PlatformEmulator, userId: string): Promise<string> {
  const code = emulator.issueCode({ userId, redirectUri: REDIRECT });
  const response = await fleet.request('POST', '/oauth2', {
    body: { code, redirect_uri: REDIRECT },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { token: string }).token;
}

/**
 * The bot reports its guilds at connect, as one shard's snapshot in parts; returns the API token it
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
  const ids = world.guildIds;
  const snapshotAt = new Date().toISOString();
  for (let part = 0; part < ids.length; part += FEED_PART) {
    const answer = await fleet.request('PUT', '/internal/shards/0/guilds', {
      token: apiToken,
      body: {
        shard_count: 1,
        snapshot_at: snapshotAt,
        total: ids.length,
        guild_ids: ids.slice(part, part + FEED_PART),
      },
    });
    if (answer.status !== 200) {
      throw new Error(`the membership feed answered ${answer.status}: ${await answer.text()}`);
    }
  }
  return apiToken;
}

// --- The users -----------------------------------------------------------------------------------

async function simulateUsers(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  options: Options,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  /** When each guild was last opened, as a cold open (performance.now()). */
  const opened = new Map<string, number>();
  const gapMs = (options.durationS * 1000) / world.users.length;
  const journeys: Promise<void>[] = [];
  let done = 0;
  const progress = setInterval(() => {
    console.log(`${journeys.length} users started, ${done} done, ${results.length} steps`);
  }, 10_000);
  try {
    for (const [i, user] of world.users.entries()) {
      journeys.push(
        journey(fleet, emulator, world, user, i, opened, results).finally(() => (done += 1)),
      );
      await sleep(gapMs);
    }
    await Promise.all(journeys);
  } finally {
    clearInterval(progress);
  }
  return results;
}

/** One user's visit to the dashboard; a step that fails ends it, as it would for a person. */
async function journey(
  fleet: Fleet,
  emulator: PlatformEmulator,
  world: World,
  user: string,
  index: number,
  opened: Map<string, number>,
  results: StepResult[],
): Promise<void> {
  const step = async <T>(name: Step, action: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const value = await action();
      results.push({ step: name, ms: performance.now() - started, error: null });
      return value;
    } catch (error) {
      results.push({ step: name, ms: performance.now() - started, error: String(error) });
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
    const token = await step('login', () => login(fleet, emulator, user));
    await step('list guilds', () => call('GET', '/users/@me/guilds', token, [200]));
    // Cold: a guild of theirs nobody opened (their own first). Warm: one of theirs someone opened
    // within the platform cache's lifetime, or the same guild again.
    const cold = mine.find((id) => !opened.has(id)) ?? mine[0];
    opened.set(cold, performance.now());
    await step('open cold guild', () => call('GET', `/users/@me/guilds/${cold}`, token, [200]));
    const recent = (id: string): boolean =>
      id !== cold && performance.now() - (opened.get(id) ?? -Infinity) < WARM_WITHIN_MS;
    const warm = mine.find(recent) ?? cold;
    await step('open warm guild', () => call('GET', `/users/@me/guilds/${warm}`, token, [200]));
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
      await step('see the change', () => stream.waitFor(role));
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
): Promise<{ waitFor(text: string): Promise<void>; close(): void }> {
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
    async waitFor(text: string): Promise<void> {
      const deadline = performance.now() + STREAM_WAIT_MS;
      while (!received.includes(text)) {
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

function report(options: Options, reports: RunReport[]): string {
  const lines: string[] = [
    `# Fleet simulation (\`npm run bench:fleet\`)`,
    '',
    `${options.instances} instances on PostgreSQL and Redis; the emulator with the platform's rate limits and ${options.latencyMs} ms per answer; ${options.guilds} guilds known through the membership feed; ${options.users} users started over ${options.durationS} s.`,
    '',
    '| | ' +
      reports.map((r) => (r.proxy === 'on' ? 'with the REST proxy' : 'without')).join(' | ') +
      ' |',
    '|---|' + reports.map(() => '---:|').join(''),
  ];
  const row = (label: string, value: (r: RunReport) => string): void => {
    lines.push(`| ${label} | ${reports.map(value).join(' | ')} |`);
  };
  const actions = (r: RunReport): number => r.results.filter((x) => x.error === null).length;
  const limited = (r: RunReport): EmulatedRequest[] => r.requests.filter((x) => x.status === 429);
  row('platform calls', (r) => String(r.requests.length));
  row('bot-token calls a second: mean / busiest second (the limit: 50)', (r) => {
    const perSecond = botCallsPerSecond(r.requests);
    const mean = perSecond.reduce((sum, n) => sum + n, 0) / Math.max(1, perSecond.length);
    return `${mean.toFixed(1)} / ${Math.max(0, ...perSecond)}`;
  });
  row('platform calls per user action', (r) =>
    (r.requests.length / Math.max(1, actions(r))).toFixed(2),
  );
  row('429 answers, global', (r) => String(limited(r).filter(isGlobal).length));
  row('429 answers, per route', (r) => String(limited(r).filter((x) => !isGlobal(x)).length));
  row('invalid answers the platform counted (it bans at 10,000 in 10 min)', (r) =>
    String(r.invalidAnswers),
  );
  row('errors users saw', (r) => String(r.results.filter((x) => x.error !== null).length));
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
  lines.push('');
  for (const r of reports) {
    const run = r.proxy === 'on' ? 'with' : 'without';
    const bot = r.requests.filter((x) => x.auth === 'bot');
    lines.push(`Bot-token calls by route ${run} the proxy: ${byRoute(bot)}`, '');
    lines.push(`429s (global and per route) by route ${run} the proxy: ${byRoute(limited(r))}`, '');
    const errors = new Map<string, number>();
    for (const result of r.results) {
      if (result.error === null) continue;
      // Errors differ by their error_id only: grouped without it.
      const key = `${result.step}: ${result.error.replace(/"error_id":"[^"]*"/, '"error_id":…')}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
    lines.push(
      errors.size === 0
        ? 'Errors users saw: none.'
        : `Errors users saw:\n${[...errors].map(([error, n]) => `- ${n} × ${error}`).join('\n')}`,
      '',
    );
  }
  return lines.join('\n');
}

/** A 429 of the global limit. */
function isGlobal(request: EmulatedRequest): boolean {
  return request.scope === 'global';
}

/** The bot token's calls in each second of the run, as the platform counts its global limit. */
function botCallsPerSecond(requests: EmulatedRequest[]): number[] {
  const bot = requests.filter((request) => request.auth === 'bot');
  if (bot.length === 0) return [];
  const start = bot[0].at;
  const seconds: number[] = [];
  for (const request of bot) {
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
