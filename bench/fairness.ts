import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIUser } from 'discord-api-types/v10';
import { format, resolveConfig } from 'prettier';
import { DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed, SeedGuild } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator, type EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { integer, readArguments } from './options';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:fairness`: an attacker and a real user side by side on the platform buckets the
 * whole service shares (docs/request-costs.md, "Shared platform buckets"), the real user's latency
 * with and without the attack.
 *
 * The built service runs in live mode (embedded database in memory, the service's rate limits on at
 * their defaults, `TRUST_PROXY=127.0.0.1` so that `X-Forwarded-For` names each client's address)
 * against the emulator with the platform's rate limits on and a latency on every answer (default
 * 100 ms). Each phase starts a service of its own, so that no phase inherits another's queues,
 * budgets or caches.
 *
 * 1. The bot's guild list. The bot does not report its guilds (no membership feed), so every check
 *    whether the bot is in a guild is one bot-token call `GET /users/@me/guilds?after=…&limit=1`,
 *    a bucket of one call a second for the whole bot. The real user opens a guild of theirs nobody
 *    opened (`GET /users/@me/guilds/{id}`: a check, then the guild's parts) at a fixed pace; under
 *    attack, six accounts (`--attackers`) each keep three requests (`--attack-loops`) in flight for
 *    invented guild ids, each a check of its own. An attacker whose own rate limit refused it waits
 *    its `Retry-After` (nothing it sends meanwhile reaches the bucket; `--flood` sends anyway).
 * 2. The token endpoint. The real user logs in (`POST /oauth2` with a code the emulator issued, from
 *    an address of its own) at a fixed pace; under attack, 300 addresses each send 3 logins with
 *    made-up codes, 100 at once, each an exchange at the platform's token endpoint (one bucket for
 *    the whole service, limited per address at the platform).
 *
 * For each phase it prints the real user's latency (p50, p99, max) and answers, where its time went
 * (how long until its own platform call reached the platform, and behind how many of the
 * attackers'), the attackers' answers by status and how fast their 429s came, and what the platform
 * saw (the emulator's log: the shared route's calls, 429s, 5xx). The target: the real user's p99
 * under attack at most one reset of the shared bucket (1 s, learned from the platform's answer: one
 * platform latency late) above its p99 alone, none of its
 * requests refused, and the attackers' excess refused fast: most at once (p50 at most 100 ms plus
 * the platform latency), and none held past the queue's wait bound (PLATFORM_QUEUE_MAX_WAIT_MS,
 * 2 s, plus one platform answer): a call admitted to wait is refused later only when callers who
 * asked less of the bucket take the turns it was waiting for.
 *
 * Prints a Markdown report; with --write also writes it to bench/fairness-results.md.
 */

const USAGE = `npm run bench:fairness -- [options]

  --finding=both|guild-list|token-endpoint
                             which findings to run (env FAIRNESS_FINDING; default both)
  --latency-ms=<ms>          platform latency added to every answer (env FAIRNESS_LATENCY_MS; default 100)

  The bot's guild list (finding 1):
  --opens=<n>                guilds the real user opens per phase, each a guild nobody opened
                             (env FAIRNESS_OPENS; default 12)
  --open-every-ms=<ms>       the real user opens one every this long (env FAIRNESS_OPEN_EVERY_MS; default 4000:
                             a busy dashboard user, who asks less of the bucket than each attacker)
  --attackers=<n>            attacking accounts (env FAIRNESS_ATTACKERS; default 6)
  --attack-loops=<n>         requests each attacker keeps in flight (env FAIRNESS_ATTACK_LOOPS; default 3)
  --attack-every-ms=<ms>     each attacker sends one request every this long, across its loops, so
                             that its budgets (30 a minute) last the whole phase and the bucket stays
                             under attack throughout (env FAIRNESS_ATTACK_EVERY_MS; default 2000)
  --flood                    attackers send again at once after their own rate limit's 429 too,
                             instead of waiting its Retry-After

  The token endpoint (finding 2):
  --logins=<n>               logins of the real user per phase, at most 10: the service allows 10
                             a minute per address (env FAIRNESS_LOGINS; default 10)
  --login-every-ms=<ms>      the real user logs in once every this long (env FAIRNESS_LOGIN_EVERY_MS; default 1000)
  --attack-addresses=<n>     attacking addresses (env FAIRNESS_ATTACK_ADDRESSES; default 300)
  --attack-per-address=<n>   made-up codes each sends (env FAIRNESS_ATTACK_PER_ADDRESS; default 3)
  --attack-concurrency=<n>   attacking requests under way at once (env FAIRNESS_ATTACK_CONCURRENCY; default 100)

  --write                    also write the report to bench/fairness-results.md
  --help                     this text`;

type Finding = 'guild-list' | 'token-endpoint';

interface Options {
  findings: Finding[];
  latencyMs: number;
  opens: number;
  openEveryMs: number;
  attackers: number;
  attackLoops: number;
  attackEveryMs: number;
  flood: boolean;
  logins: number;
  loginEveryMs: number;
  attackAddresses: number;
  attackPerAddress: number;
  attackConcurrency: number;
  write: boolean;
}

/** The redirect URI the service allows by default, on its default port. */
const REDIRECT = DEFAULT_REDIRECT_URI;
/** The service's `oauth2` budget: logins a minute per address (RATE_LIMIT_OAUTH2's default). */
const LOGINS_PER_ADDRESS = 10;
/** Every request waits at most this long for its answer; then it counts as no answer (status 0). */
const REQUEST_TIMEOUT_MS = 30_000;
/** The target: the real user's p99 under attack at most this far above its p99 alone. */
const ONE_RESET_MS = 1_000;
/** The target: the attackers' 429s take at most this long, plus the platform latency, at p50. */
const FAST_REFUSAL_MS = 100;
/** The target: no attacker's 429 later than the queue's wait bound (the default) plus this and the latency. */
const QUEUE_WAIT_MS = 2_000;
const SLACK_MS = 200;

/** The real user: a member of every guild the benchmark adds, as the bot is. */
const REAL_USER = '1500000000000000001';
const ATTACKER_BASE = 1_500_000_000_000_000_100n;
/** The guilds the real user opens: ids far from the demo seed's (1100000000000000…). */
const GUILD_BASE = 1_510_000_000_000_000_000n;
/** Invented guild ids are drawn above this, below it plus 10^17: no guild has one. */
const INVENTED_BASE = 1_800_000_000_000_000_000n;
/** Where the logins of finding 1 come from (one address each, so none meets another's budget). */
const LOGIN_ADDRESS = (n: number): string => `198.51.100.${n + 1}`;
/** The real user's address in finding 2. */
const REAL_ADDRESS = '192.0.2.10';
/** The attacking addresses of finding 2: 10.1.0.1, 10.1.0.2, … */
const ATTACK_ADDRESS = (n: number): string => `10.1.${Math.floor((n + 1) / 256)}.${(n + 1) % 256}`;

const GUILD_CHECK_ROUTE = 'GET /users/@me/guilds';
const TOKEN_ROUTE = 'POST /oauth2/token';

/** Which 429 it was: the shared bucket's queue refused the call, or the caller's own rate limit. */
type Refusal = 'queue' | 'budget';

/** One request of the benchmark's clients, as they saw it. */
interface Answer {
  /** Epoch ms when it was sent (the emulator's log is on the same clock). */
  sentAt: number;
  ms: number;
  /** 0: no answer (a network error or the client's timeout). */
  status: number;
  message: string;
  refusal: Refusal | null;
  /** The service's rate-limit bucket a `budget` 429 names (`guild-check`, `oauth2`, …). */
  budget: string | null;
  retryAfterS: number | null;
}

/** The real user's request and its own call at the platform. */
interface RealRequest extends Answer {
  /** When its own call (the membership check, the code exchange) reached the platform; null: none. */
  platformAt: number | null;
  /** Attackers' calls of the shared route that reached the platform between its start and its own. */
  behind: number;
}

interface PhaseResult {
  attacked: boolean;
  /** Epoch ms of the phase's start. */
  startedAt: number;
  durationS: number;
  real: RealRequest[];
  attack: Answer[];
  /** The emulator's log of the phase (the logins before it left out). */
  requests: EmulatedRequest[];
  /** Attackers' calls of the shared route at the platform, and the span they came in (s from the phase's start). */
  attackCalls: number;
  attackSpanS: [number, number] | null;
  /** The benchmark process's own event-loop delay meanwhile (its clients and the emulator), ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  serviceLog: string;
}

interface FindingResult {
  finding: Finding;
  alone: PhaseResult;
  attacked: PhaseResult;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const seed = buildSeed(options);
  const emulator = await PlatformEmulator.start(
    seed,
    {},
    { rateLimits: {}, maxLoggedRequests: 10_000_000 },
  );
  if (options.latencyMs > 0) {
    emulator.intercept(async (_route, _reply, signal) => {
      await sleep(options.latencyMs, undefined, { signal });
    });
  }
  const logs = mkdtempSync(join(tmpdir(), 'bms-fairness-'));
  console.log(`the services' logs: ${logs}`);
  const results: FindingResult[] = [];
  try {
    for (const finding of options.findings) {
      const phases: PhaseResult[] = [];
      for (const attacked of [false, true]) {
        const label = `${finding}, ${attacked ? 'under attack' : 'alone'}`;
        console.log(`\n=== ${label}`);
        const log = join(logs, `${finding}-${attacked ? 'attacked' : 'alone'}.log`);
        const phase =
          finding === 'guild-list'
            ? await guildListPhase(options, emulator, attacked, log)
            : await tokenEndpointPhase(options, emulator, attacked, log);
        console.log(summaryLine(phase));
        phases.push(phase);
      }
      results.push({ finding, alone: phases[0], attacked: phases[1] });
    }
  } finally {
    await emulator.close();
  }
  // Formatted as the repository's own Markdown is (npm run format:check), tables aligned.
  const path = join(ROOT, 'bench', 'fairness-results.md');
  const markdown = await format(report(options, results), {
    ...(await resolveConfig(path)),
    filepath: path,
  });
  console.log(`\n${markdown}`);
  if (options.write) writeFileSync(path, markdown);
}

// --- Options -------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const known = [
    'finding',
    'latency-ms',
    'opens',
    'open-every-ms',
    'attackers',
    'attack-loops',
    'attack-every-ms',
    'flood',
    'logins',
    'login-every-ms',
    'attack-addresses',
    'attack-per-address',
    'attack-concurrency',
    'write',
  ];
  const values = readArguments(args, known, USAGE);
  const value = (name: string, fallback: string): string =>
    values.get(name) ?? env[`FAIRNESS_${name.toUpperCase().replaceAll('-', '_')}`] ?? fallback;
  const number = (name: string, fallback: number, min: number): number =>
    integer(`--${name}`, value(name, String(fallback)), min);
  const finding = value('finding', 'both');
  if (!['both', 'guild-list', 'token-endpoint'].includes(finding)) {
    throw new Error(`--finding must be both, guild-list or token-endpoint, not "${finding}"`);
  }
  const logins = number('logins', LOGINS_PER_ADDRESS, 1);
  if (logins > LOGINS_PER_ADDRESS) {
    throw new Error(
      `--logins is at most ${LOGINS_PER_ADDRESS}: the service allows ${LOGINS_PER_ADDRESS} logins a minute per address (RATE_LIMIT_OAUTH2), and the real user logs in from one`,
    );
  }
  return {
    findings: finding === 'both' ? ['guild-list', 'token-endpoint'] : [finding as Finding],
    latencyMs: number('latency-ms', 100, 0),
    opens: number('opens', 12, 1),
    openEveryMs: number('open-every-ms', 4_000, 0),
    attackers: number('attackers', 6, 1),
    attackLoops: number('attack-loops', 3, 1),
    attackEveryMs: number('attack-every-ms', 2_000, 0),
    flood: values.has('flood') || ['1', 'true'].includes(env.FAIRNESS_FLOOD ?? ''),
    logins,
    loginEveryMs: number('login-every-ms', 1_000, 0),
    attackAddresses: number('attack-addresses', 300, 1),
    attackPerAddress: number('attack-per-address', 3, 1),
    attackConcurrency: number('attack-concurrency', 100, 1),
    write: values.has('write'),
  };
}

// --- The world -----------------------------------------------------------------------------------

function attackerIds(options: Options): string[] {
  return Array.from({ length: options.attackers }, (_, i) =>
    (ATTACKER_BASE + BigInt(i)).toString(),
  );
}

/** The guilds the real user opens in one phase of finding 1: each phase its own, all cold. */
function phaseGuilds(options: Options, attacked: boolean): string[] {
  const first = attacked ? options.opens : 0;
  return Array.from({ length: options.opens }, (_, i) =>
    (GUILD_BASE + BigInt(first + i) * 10n).toString(),
  );
}

/** The demo world, the real user and the attackers, and the guilds of the bot and the real user. */
function buildSeed(options: Options): EmulatorSeed {
  const user = (id: string, username: string): APIUser => ({
    id,
    username,
    global_name: null,
    discriminator: '0',
    avatar: null,
  });
  const joined = '2024-01-01T00:00:00.000Z';
  const guild = (id: string): SeedGuild => ({
    id,
    name: `guild ${id.slice(-6)}`,
    icon: null,
    owner_id: REAL_USER,
    roles: [{ id, name: '@everyone', permissions: '0', position: 0 }],
    channels: [],
    members: [
      { user_id: DEMO_SEED.application.id, roles: [], joined_at: joined },
      { user_id: REAL_USER, roles: [], joined_at: joined },
    ],
  });
  return {
    ...DEMO_SEED,
    users: [
      ...DEMO_SEED.users,
      user(REAL_USER, 'real-user'),
      ...attackerIds(options).map((id, i) => user(id, `attacker-${i + 1}`)),
    ],
    guilds: [
      ...DEMO_SEED.guilds,
      ...[false, true].flatMap((attacked) => phaseGuilds(options, attacked)).map(guild),
    ],
  };
}

/** A guild id nobody has: above every seeded one, drawn anew each time. */
function inventedId(): string {
  return (INVENTED_BASE + (randomBytes(8).readBigUInt64BE() % 10n ** 17n)).toString();
}

/** A well-formed code nobody issued: 30 letters and digits. */
function madeUpCode(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(30), (byte) => alphabet[byte % alphabet.length]).join('');
}

// --- The service ---------------------------------------------------------------------------------

function startService(emulator: PlatformEmulator, logFile: string): Promise<ServiceProcess> {
  const { application } = DEMO_SEED;
  return startServiceProcess(
    {
      DISCORD_BOT_TOKEN: application.bot_token,
      DISCORD_CLIENT_ID: application.id,
      DISCORD_CLIENT_SECRET: application.secret,
      DISCORD_API_URL: emulator.apiUrl,
      DATABASE_URL: 'memory://',
      RATE_LIMITS_ENABLED: 'true',
      TRUST_PROXY: '127.0.0.1',
      OAUTH2_ALLOWED_REDIRECTS: REDIRECT,
      LOG_LEVEL: 'warn',
    },
    logFile,
  );
}

/** Sends one request and reads its answer whole; never throws (no answer is status 0). */
async function send(
  baseUrl: string,
  method: 'GET' | 'POST',
  path: string,
  options: { token?: string; body?: object; address?: string } = {},
): Promise<Answer & { text: string }> {
  const sentAt = Date.now();
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(options.body ? { 'Content-Type': 'application/json' } : {}),
        ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        ...(options.address ? { 'X-Forwarded-For': options.address } : {}),
      },
      body: options.body ? JSON.stringify(options.body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let message = '';
    try {
      const parsed = (JSON.parse(text) as { message?: unknown }).message;
      message = typeof parsed === 'string' ? parsed : '';
    } catch {
      message = text.slice(0, 160);
    }
    const budget = response.status === 429 ? /^Too many requests \(([^)]+)\)/.exec(message) : null;
    const retryAfter = Number(response.headers.get('Retry-After'));
    return {
      sentAt,
      ms,
      status: response.status,
      message,
      refusal: response.status === 429 ? (budget ? 'budget' : 'queue') : null,
      budget: budget?.[1] ?? null,
      retryAfterS: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      text,
    };
  } catch (error) {
    return {
      sentAt,
      ms: performance.now() - started,
      status: 0,
      message: error instanceof Error ? error.message : String(error),
      refusal: null,
      budget: null,
      retryAfterS: null,
      text: '',
    };
  }
}

/** Logs `userId` in from `address`; returns the session's token. */
async function login(
  service: ServiceProcess,
  emulator: PlatformEmulator,
  userId: string,
  address: string,
): Promise<string> {
  const code = emulator.issueCode({ userId, redirectUri: REDIRECT });
  const answer = await send(service.baseUrl, 'POST', '/oauth2', {
    body: { code, redirect_uri: REDIRECT },
    address,
  });
  if (answer.status !== 200) {
    throw new Error(`the login of ${userId} answered ${answer.status}: ${answer.message}`);
  }
  return (JSON.parse(answer.text) as { token: string }).token;
}

/** Strips what only `send` needs. */
function answerOf(answer: Answer & { text?: string }): Answer {
  const { sentAt, ms, status, message, refusal, budget, retryAfterS } = answer;
  return { sentAt, ms, status, message, refusal, budget, retryAfterS };
}

/**
 * Runs a phase's real user (`real`, given the phase's start) and, under attack, `attack` (given a
 * signal that says the real user is done) side by side, on a service of the phase's own.
 */
async function phase(
  emulator: PlatformEmulator,
  attacked: boolean,
  logFile: string,
  prepare: (service: ServiceProcess) => Promise<{
    real: (started: number) => Promise<Answer[]>;
    attack: (done: AbortSignal) => Promise<Answer[]>;
  }>,
  matchCalls: (real: Answer[], requests: EmulatedRequest[]) => RealRequest[],
  isAttackCall: (request: EmulatedRequest) => boolean,
): Promise<PhaseResult> {
  const service = await startService(emulator, logFile);
  try {
    const { real, attack } = await prepare(service);
    const firstRequest = emulator.requests.length;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const startedAt = Date.now();
    const started = performance.now();
    const done = new AbortController();
    const attacking = attacked ? attack(done.signal) : Promise.resolve([]);
    let realAnswers: Answer[];
    try {
      realAnswers = await real(started);
    } finally {
      done.abort();
    }
    const attackAnswers = await attacking;
    const durationS = (performance.now() - started) / 1000;
    loop.disable();
    const requests = emulator.requests.slice(firstRequest);
    const attackAt = requests.filter(isAttackCall).map((request) => request.at);
    return {
      attacked,
      startedAt,
      durationS,
      real: matchCalls(realAnswers, requests),
      attack: attackAnswers,
      requests,
      attackCalls: attackAt.length,
      attackSpanS:
        attackAt.length === 0
          ? null
          : [
              (Math.min(...attackAt) - startedAt) / 1000,
              (Math.max(...attackAt) - startedAt) / 1000,
            ],
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      loopDelayMaxMs: loop.max / 1e6,
      serviceLog: logFile,
    };
  } finally {
    await stopServiceProcess(service.process);
  }
}

/** Waits until `at` (performance.now()), or not at all when it has passed. */
async function until(at: number): Promise<void> {
  const due = at - performance.now();
  if (due > 0) await sleep(due);
}

/** The attackers' calls of the shared route between each real request's start and its own call. */
function withCalls(
  real: Answer[],
  ownCall: (answer: Answer, index: number) => EmulatedRequest | undefined,
  attackCalls: EmulatedRequest[],
): RealRequest[] {
  return real.map((answer, i) => {
    const call = ownCall(answer, i);
    const platformAt = call?.at ?? null;
    const behind =
      platformAt === null
        ? 0
        : attackCalls.filter((c) => c.at >= answer.sentAt && c.at < platformAt).length;
    return { ...answer, platformAt, behind };
  });
}

// --- Finding 1: the bot's guild list ---------------------------------------------------------------

/** The guild id a bot guild-list check is about: the call asks from the id before it. */
function checkedGuild(request: EmulatedRequest): string | null {
  if (request.route !== GUILD_CHECK_ROUTE || request.auth !== 'bot') return null;
  const after = new URL(request.url, 'http://emulator').searchParams.get('after');
  return after === null ? null : (BigInt(after) + 1n).toString();
}

function isInventedCheck(request: EmulatedRequest): boolean {
  const guild = checkedGuild(request);
  return guild !== null && BigInt(guild) >= INVENTED_BASE;
}

function guildListPhase(
  options: Options,
  emulator: PlatformEmulator,
  attacked: boolean,
  logFile: string,
): Promise<PhaseResult> {
  const guilds = phaseGuilds(options, attacked);
  return phase(
    emulator,
    attacked,
    logFile,
    async (service) => {
      const token = await login(service, emulator, REAL_USER, LOGIN_ADDRESS(0));
      // The attackers log in in both phases, so that the phases differ only by the attack; one at
      // a time, as the token endpoint's queue would refuse many at once.
      const attackers: string[] = [];
      for (const [i, id] of attackerIds(options).entries()) {
        attackers.push(await login(service, emulator, id, LOGIN_ADDRESS(i + 1)));
      }
      return {
        real: async (started) => {
          const answers: Answer[] = [];
          for (const [i, guild] of guilds.entries()) {
            // The first one pace after the start, so that the attack is under way.
            await until(started + (i + 1) * options.openEveryMs);
            answers.push(
              answerOf(await send(service.baseUrl, 'GET', `/users/@me/guilds/${guild}`, { token })),
            );
          }
          return answers;
        },
        attack: async (done) => {
          const answers: Answer[] = [];
          const loop = async (attackerToken: string): Promise<void> => {
            while (!done.aborted) {
              const answer = await send(
                service.baseUrl,
                'GET',
                `/users/@me/guilds/${inventedId()}`,
                {
                  token: attackerToken,
                },
              );
              answers.push(answerOf(answer));
              if (options.flood) continue;
              // Past its own budget nothing the attacker sends reaches the bucket until it resets;
              // otherwise it paces itself so that its budgets last the whole phase.
              const pauseMs =
                answer.refusal === 'budget'
                  ? (answer.retryAfterS ?? 1) * 1000
                  : options.attackEveryMs * options.attackLoops;
              await sleep(pauseMs, undefined, { signal: done }).catch(() => undefined);
            }
          };
          await Promise.all(
            attackers.flatMap((attackerToken) =>
              Array.from({ length: options.attackLoops }, () => loop(attackerToken)),
            ),
          );
          return answers;
        },
      };
    },
    (real, requests) => {
      const attackChecks = requests.filter(isInventedCheck);
      return withCalls(
        real,
        (_answer, i) => requests.find((request) => checkedGuild(request) === guilds[i]),
        attackChecks,
      );
    },
    isInventedCheck,
  );
}

// --- Finding 2: the token endpoint -----------------------------------------------------------------

function tokenEndpointPhase(
  options: Options,
  emulator: PlatformEmulator,
  attacked: boolean,
  logFile: string,
): Promise<PhaseResult> {
  return phase(
    emulator,
    attacked,
    logFile,
    (service) =>
      Promise.resolve({
        real: async (started) => {
          const answers: Answer[] = [];
          for (let i = 0; i < options.logins; i++) {
            await until(started + (i + 1) * options.loginEveryMs);
            const code = emulator.issueCode({ userId: REAL_USER, redirectUri: REDIRECT });
            const answer = await send(service.baseUrl, 'POST', '/oauth2', {
              body: { code, redirect_uri: REDIRECT },
              address: REAL_ADDRESS,
            });
            answers.push(answerOf(answer));
          }
          return answers;
        },
        // A burst: every address's first code, then every address's second, …, so many at once.
        attack: async () => {
          const sends: { address: string; code: string }[] = [];
          for (let k = 0; k < options.attackPerAddress; k++) {
            for (let a = 0; a < options.attackAddresses; a++) {
              sends.push({ address: ATTACK_ADDRESS(a), code: madeUpCode() });
            }
          }
          const answers: Answer[] = [];
          let next = 0;
          const worker = async (): Promise<void> => {
            while (next < sends.length) {
              const { address, code } = sends[next++];
              const answer = await send(service.baseUrl, 'POST', '/oauth2', {
                body: { code, redirect_uri: REDIRECT },
                address,
              });
              answers.push(answerOf(answer));
            }
          };
          await Promise.all(Array.from({ length: options.attackConcurrency }, worker));
          return answers;
        },
      }),
    (real, requests) => {
      const exchanges = requests.filter((request) => request.route === TOKEN_ROUTE);
      // Only the real user's codes are granted (200); its logins follow one another.
      const granted = exchanges.filter((request) => request.status === 200);
      let taken = 0;
      return withCalls(
        real,
        (answer) => {
          if (answer.status !== 200) return undefined;
          const call = granted.slice(taken).find((request) => request.at >= answer.sentAt);
          if (call) taken = granted.indexOf(call) + 1;
          return call;
        },
        exchanges.filter((request) => request.status !== 200),
      );
    },
    (request) => request.route === TOKEN_ROUTE && request.status !== 200,
  );
}

// --- The report ----------------------------------------------------------------------------------

function summaryLine(result: PhaseResult): string {
  const ok = result.real.filter((r) => r.status === 200).map((r) => r.ms);
  return `${result.durationS.toFixed(1)} s; real user: ${statuses(result.real)}, p50 ${ms(percentile(ok, 50))} / p99 ${ms(percentile(ok, 99))} ms; attackers: ${result.attack.length} requests, ${statuses(result.attack)}`;
}

interface FindingText {
  title: string;
  what: string;
  realRequest: string;
  ownCall: string;
  sharedRoute: string;
  attackerRequests: string;
}

function findingText(options: Options, finding: Finding): FindingText {
  const latency = `${options.latencyMs} ms`;
  if (finding === 'guild-list') {
    return {
      title: "Finding 1: the bot's guild list (membership checks without the bot's feed)",
      what: `The bot does not report its guilds, so each check whether it is in a guild is one bot-token \`GET /users/@me/guilds?after=…&limit=1\` (the platform: 1 a second for the whole bot; the service: \`guild-check\`, 30 a minute per user). The real user opens ${options.opens} guilds of theirs nobody opened (\`GET /users/@me/guilds/{id}\`), one every ${options.openEveryMs} ms, each phase its own guilds. Under attack, ${options.attackers} accounts each send requests for invented guild ids, a fresh id each, over ${options.attackLoops} connections${options.flood ? ', sending again at once after any answer' : `, one every ${options.attackEveryMs} ms per account (their budgets, 30 a minute, then last the whole phase: ${((options.attackers * 1000) / Math.max(1, options.attackEveryMs)).toFixed(1)} requests a second on a bucket of one); an attacker refused by its own rate limit waits its \`Retry-After\``}. Platform latency ${latency}.`,
      realRequest: 'opens',
      ownCall: 'its check reached the platform after',
      sharedRoute: "bot's guild-list calls (the real user's / the attackers')",
      attackerRequests: 'requests for invented ids',
    };
  }
  return {
    title: 'Finding 2: the token endpoint (logins)',
    what: `Each login (\`POST /oauth2\`) is one exchange at the platform's token endpoint (\`POST /oauth2/token\`, one bucket for the whole service; the platform: 10 a second per address; the service: \`oauth2\`, 10 a minute per address). The real user logs in ${options.logins} times with codes the emulator issued, one every ${options.loginEveryMs} ms, from ${REAL_ADDRESS}. Under attack, ${options.attackAddresses} addresses each send ${options.attackPerAddress} logins with made-up codes (30 letters and digits) and the allowed redirect URI, ${options.attackConcurrency} under way at once, starting with the phase. Platform latency ${latency}.`,
    realRequest: 'logins',
    ownCall: 'its exchange reached the platform after',
    sharedRoute: 'token-endpoint calls (granted: the real user / refused: the attackers)',
    attackerRequests: 'logins with made-up codes',
  };
}

function report(options: Options, results: FindingResult[]): string {
  const cpu = cpus();
  const lines: string[] = [
    '# Fairness of the shared platform buckets (`npm run bench:fairness`)',
    '',
    `\`${['npm run bench:fairness --', ...process.argv.slice(2)].join(' ')}\`, ${new Date().toISOString()}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}.`,
    '',
    `The built service in live mode against the emulator with the platform's rate limits on and ${options.latencyMs} ms on every answer; embedded database in memory; the service's rate limits on at their defaults; \`PLATFORM_QUEUE_MAX_WAIT_MS\` at its default (2000); \`TRUST_PROXY=127.0.0.1\` (each client names its address in \`X-Forwarded-For\`). Each phase runs on a service started for it. The target: the real user's p99 under attack at most ${ONE_RESET_MS + options.latencyMs} ms above its p99 alone (one reset of the shared bucket, ${ONE_RESET_MS} ms, as the service learns it: from the platform's answer, one platform latency after the platform counted the call), none of its requests refused, and the attackers' excess refused fast: their 429s' p50 at most ${FAST_REFUSAL_MS + options.latencyMs} ms (${FAST_REFUSAL_MS} ms plus the platform latency), none later than ${QUEUE_WAIT_MS + options.latencyMs + SLACK_MS} ms (the queue's wait bound, one platform answer and ${SLACK_MS} ms). Latencies are the clients' (the benchmark's process, which also runs the emulator).`,
  ];
  for (const result of results) lines.push('', ...findingReport(options, result));
  return `${lines.join('\n')}\n`;
}

function findingReport(options: Options, result: FindingResult): string[] {
  const text = findingText(options, result.finding);
  const phases = [result.alone, result.attacked];
  const lines = [
    `## ${text.title}`,
    '',
    text.what,
    '',
    '| | alone | under attack |',
    '| --- | --: | --: |',
  ];
  const row = (name: string, value: (p: PhaseResult) => string): void => {
    lines.push(`| ${name} | ${phases.map(value).join(' | ')} |`);
  };
  const ok = (p: PhaseResult): RealRequest[] => p.real.filter((r) => r.status === 200);
  const sharedRoute = result.finding === 'guild-list' ? GUILD_CHECK_ROUTE : TOKEN_ROUTE;
  const shared = (p: PhaseResult): EmulatedRequest[] =>
    p.requests.filter(
      (r) => r.route === sharedRoute && (result.finding === 'token-endpoint' || r.auth === 'bot'),
    );
  const refusedBy = (p: PhaseResult, refusal: Refusal): Answer[] =>
    p.attack.filter((a) => a.refusal === refusal);

  row(`real user: ${text.realRequest}, answers`, (p) => `${p.real.length}: ${statuses(p.real)}`);
  row('real user: p50 / p99 / max ms (its 200s)', (p) => spread(ok(p).map((r) => r.ms)));
  row(`real user: ${text.ownCall}, p50 / p99 / max ms`, (p) =>
    spread(p.real.filter((r) => r.platformAt !== null).map((r) => r.platformAt! - r.sentAt)),
  );
  row(
    "real user: requests that waited behind attackers' calls at the platform / most calls",
    (p) =>
      p.attacked
        ? `${p.real.filter((r) => r.behind > 0).length} / ${Math.max(0, ...p.real.map((r) => r.behind))}`
        : '–',
  );
  row(`attackers: ${text.attackerRequests}, sent over … s (first sent to last answered)`, (p) => {
    if (!p.attacked || p.attack.length === 0) return '–';
    const first = Math.min(...p.attack.map((a) => a.sentAt));
    const last = Math.max(...p.attack.map((a) => a.sentAt + a.ms));
    return `${p.attack.length} over ${((last - first) / 1000).toFixed(1)}`;
  });
  row('attackers: answers', (p) => (p.attacked ? statuses(p.attack) : '–'));
  row("attackers: 429s of the shared bucket's queue / of their own rate limits", (p) =>
    p.attacked ? `${refusedBy(p, 'queue').length} / ${budgets(refusedBy(p, 'budget'))}` : '–',
  );
  row('attackers: 429 p50 / p99 / max ms, all', (p) =>
    p.attacked ? spread(p.attack.filter((a) => a.status === 429).map((a) => a.ms)) : '–',
  );
  row("attackers: 429 p50 / p99 / max ms, the queue's", (p) =>
    p.attacked ? spread(refusedBy(p, 'queue').map((a) => a.ms)) : '–',
  );
  row('attackers: other answers p50 / p99 / max ms', (p) =>
    p.attacked ? spread(p.attack.filter((a) => a.status !== 429).map((a) => a.ms)) : '–',
  );
  row(`platform: ${text.sharedRoute}`, (p) => {
    const calls = shared(p);
    const attack = calls.filter((r) => isAttackCall(result.finding, r)).length;
    return `${calls.length} (${calls.length - attack} / ${attack})`;
  });
  row("platform: the attackers' calls came from … to … s of the phase", (p) =>
    p.attackSpanS ? `${p.attackSpanS[0].toFixed(1)} to ${p.attackSpanS[1].toFixed(1)}` : '–',
  );
  row('platform: calls / 429s it answered / 5xx', (p) => {
    const limited = p.requests.filter((r) => r.status === 429).length;
    const failed = p.requests.filter((r) => (r.status ?? 0) >= 500).length;
    return `${p.requests.length} / ${limited} / ${failed}`;
  });
  row('service: 5xx answers (real user + attackers)', (p) =>
    String([...p.real, ...p.attack].filter((a) => a.status >= 500).length),
  );
  row(
    'phase: seconds / benchmark event-loop delay p99, max ms',
    (p) => `${p.durationS.toFixed(1)} / ${ms(p.loopDelayP99Ms)}, ${ms(p.loopDelayMaxMs)}`,
  );
  lines.push('');
  for (const p of phases) {
    const name = p.attacked ? 'under attack' : 'alone';
    lines.push(
      `The real user's ${text.realRequest} ${name}, in order: ms (status when not 200; when its own call reached the platform, ms after the request; behind how many attackers' calls): ${p.real.map(realEntry).join(', ')}.`,
      '',
    );
  }
  const timeline = shared(result.attacked).map((r) => {
    const who = isAttackCall(result.finding, r) ? 'a' : 'r';
    const status = r.status === 429 ? ' 429' : '';
    return `${((r.at - result.attacked.startedAt) / 1000).toFixed(2)} ${who}${status}`;
  });
  lines.push(
    `The ${text.sharedRoute.replace(/ \(.*$/, '')} at the platform under attack (s from the phase's start; r: the real user's, a: an attacker's; 429: the platform refused it): ${timeline.join(', ') || 'none'}.`,
    '',
  );
  for (const p of phases) {
    const limited = p.requests.filter((r) => r.status === 429);
    if (limited.length > 0) {
      lines.push(
        `Platform 429s ${p.attacked ? 'under attack' : 'alone'} by route: ${byRoute(limited)}.`,
        '',
      );
    }
  }
  for (const p of phases) {
    if (!p.attacked) continue;
    const reasons = new Map<string, number>();
    for (const a of p.attack) {
      if (a.status !== 429) continue;
      const reason = a.message.replace(/\b\d+\b/g, 'n');
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    lines.push(
      "The attackers' 429s by message (numbers as n):",
      '',
      ...[...reasons].sort(([, a], [, b]) => b - a).map(([reason, n]) => `- ${n} × ${reason}`),
      '',
    );
  }
  const odd = new Map<string, number>();
  for (const p of phases) {
    for (const [who, answers] of [
      ['real user', p.real],
      ['attackers', p.attack],
    ] as const) {
      for (const a of answers) {
        const expected =
          who === 'real user'
            ? a.status === 200
            : a.status === 429 || a.status === 404 || (a.status === 400 && isBadCode(a));
        if (expected) continue;
        const key = `${p.attacked ? 'under attack' : 'alone'}, ${who}: ${a.status} ${a.message.replace(/\d{17,20}/g, '{id}')}`;
        odd.set(key, (odd.get(key) ?? 0) + 1);
      }
    }
  }
  if (odd.size > 0) {
    lines.push(
      'Answers other than expected (the real user: 200; attackers: 404 for an invented id, 400 for a made-up code, 429):',
      '',
      ...[...odd].map(([what, n]) => `- ${n} × ${what}`),
      '',
    );
  }
  lines.push(verdict(options, result, text), '');
  return lines;
}

/** Whether a call of the shared route was an attacker's (an invented id, a made-up code). */
function isAttackCall(finding: Finding, request: EmulatedRequest): boolean {
  return finding === 'guild-list' ? isInventedCheck(request) : request.status !== 200;
}

/** Whether a 400 is the platform's refusal of a made-up code (what an attacker's login meets). */
function isBadCode(answer: Answer): boolean {
  return /grant|code/i.test(answer.message);
}

function verdict(options: Options, result: FindingResult, text: FindingText): string {
  const p99 = (p: PhaseResult): number =>
    percentile(
      p.real.filter((r) => r.status === 200).map((r) => r.ms),
      99,
    );
  const alone = p99(result.alone);
  const attacked = p99(result.attacked);
  const refusedReal = result.attacked.real.filter((r) => r.status !== 200).length;
  const refusals = result.attacked.attack.filter((a) => a.status === 429).map((a) => a.ms);
  const refusalP50 = percentile(refusals, 50);
  const refusalMax = refusals.length === 0 ? 0 : Math.max(...refusals);
  const bound = FAST_REFUSAL_MS + options.latencyMs;
  const ceiling = QUEUE_WAIT_MS + options.latencyMs + SLACK_MS;
  // One reset as the service can know it: from the platform's answer, which arrives a platform
  // latency after the platform counted the call.
  const resetBound = ONE_RESET_MS + options.latencyMs;
  const latencyHeld = Number.isFinite(attacked) && attacked <= alone + resetBound;
  const realHeld = refusedReal === 0 && result.alone.real.every((r) => r.status === 200);
  const fastHeld = refusals.length === 0 || (refusalP50 <= bound && refusalMax <= ceiling);
  const held = latencyHeld && realHeld && fastHeld;
  return `**Target ${held ? 'held' : 'NOT held'}.** The real user's p99 under attack ${ms(attacked)} ms against ${ms(alone)} ms alone + ${resetBound} (one reset, learned one platform answer late) = ${ms(alone + resetBound)} ms: ${latencyHeld ? 'within' : 'over'}. The real user's ${text.realRequest} refused or failed under attack: ${refusedReal} of ${result.attacked.real.length}${realHeld ? '' : ' (should be none)'}. The attackers' 429s ${refusals.length === 0 ? '– (none)' : `p50 ${ms(refusalP50)} ms (at most ${bound}), max ${ms(refusalMax)} ms (at most ${ceiling}, the queue's wait bound)`}: ${fastHeld ? 'fast' : 'not fast'}.`;
}

function realEntry(request: RealRequest): string {
  const notes = [
    ...(request.status === 200 ? [] : [String(request.status)]),
    ...(request.platformAt === null
      ? []
      : [`call after ${ms(request.platformAt - request.sentAt)}`]),
    ...(request.behind > 0 ? [`behind ${request.behind}`] : []),
  ];
  return `${ms(request.ms)}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

function statuses(answers: Answer[]): string {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  if (counts.size === 0) return 'none';
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status === 0 ? 'no answer' : status} ×${n}`)
    .join(', ');
}

/** `n (bucket m, …)` of the 429s of the callers' own rate limits. */
function budgets(answers: Answer[]): string {
  if (answers.length === 0) return '0';
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a.budget ?? '?', (counts.get(a.budget ?? '?') ?? 0) + 1);
  return `${answers.length} (${[...counts].map(([bucket, n]) => `${bucket} ${n}`).join(', ')})`;
}

function byRoute(requests: EmulatedRequest[]): string {
  const counts = new Map<string, number>();
  for (const request of requests) counts.set(request.route, (counts.get(request.route) ?? 0) + 1);
  return [...counts].map(([route, n]) => `\`${route}\` ${n}`).join(', ');
}

/** `p50 / p99 / max`, or – with nothing to measure. */
function spread(values: number[]): string {
  if (values.length === 0) return '–';
  return `${ms(percentile(values, 50))} / ${ms(percentile(values, 99))} / ${ms(Math.max(...values))}`;
}

/** The nearest-rank percentile; NaN of nothing. */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(1) : String(Math.round(value));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
