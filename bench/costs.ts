import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BODY_LIMIT_BYTES } from 'src/config/app-config';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { MAX_REVISIONS_PAGE } from 'src/settings/revisions/dto/revisions.dto';
import { MAX_VIEW_LIMIT } from 'src/settings/schema/validation-schema';
import { MAX_RESTORED_REVISIONS } from 'src/settings/revisions/settings-rollback.service';
import { MAX_IMPORT_ENTRIES } from 'src/settings/transfer/settings-transfer.service';
import { MAX_CHANGE_ENTRIES } from 'src/settings/engine/change-plan';
import { MAX_NAMED_MEMBERS } from 'src/settings/engine/settings-callers';
import { BENCH_IDS, BenchPlatform } from './bench-platform';
import { databaseOption, embeddedDatabase, integer, type DatabaseOption } from './options';
import { rssMb } from './resident-memory';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:costs`: what one request of each heavy route costs at its documented limits
 * (docs/request-costs.md): the platform calls it causes, its time, what it costs everyone else,
 * and the service's resident memory around it.
 *
 * The built service runs as a child process on the embedded database, in live mode against the
 * benchmark's platform emulator (the demo world plus the Bench Guild), rate limits off. The demo
 * community's owner (alice) sends the heavy requests one at a time. Meanwhile a probe, the Bench
 * Guild's owner on her own guild, sends `GET …/settings/revisions?limit=1` (a cheap request that
 * needs the database) every 10 ms: on the embedded engine every request shares one connection, so
 * the probe's latency while a heavy request runs, against its latency with nothing else running
 * (the baseline, measured in the same run), is what that request's database time costs others.
 *
 * The platform calls of a request are the emulator's log between its start and its answer, less
 * the probe's (those about the Bench Guild). Resident memory (VmRSS) is read before and after each
 * request and sampled every few milliseconds in between.
 *
 * Prints a Markdown report; with --write also writes it to bench/costs-results.md.
 */

const USAGE = `npm run bench:costs -- [options]

  --rounds=<n>              measured rounds, each sending every request (env COSTS_ROUNDS; default 5)
  --warmup=<n>              rounds run first and discarded (env COSTS_WARMUP; default 1)
  --database=memory|file    DATABASE_URL=memory:// (default) or a temporary DATA_DIR (env COSTS_DATABASE)
  --write                   also write the report to bench/costs-results.md
  --help                    this text`;

interface Options {
  rounds: number;
  warmup: number;
  database: DatabaseOption;
  write: boolean;
}

const GUILD = DEMO_IDS.community;
/** The demo community's moderation log: a channel the bot may post in (an `auditlog_sinks` target). */
const MOD_LOG_CHANNEL = '1100000000000000132';
const PROBE_INTERVAL_MS = 10;
/** How long the probe runs alone for its baseline, at the start and at the end. */
const BASELINE_MS = 3_000;
const MEMORY_SAMPLE_MS = 5;
/**
 * The service's PLATFORM_CACHE_TTL (its default), and a wait past it: the request after it opens
 * the guild again on the platform, as the first request of a guild does.
 */
const PLATFORM_CACHE_TTL_S = 5;
const CONTEXT_EXPIRY_MS = (PLATFORM_CACHE_TTL_S + 1) * 1_000;
/** Updates that follow the created entries, so that a restore reads MAX_RESTORED_REVISIONS. */
const UPDATE_IMPORTS = MAX_RESTORED_REVISIONS / MAX_CHANGE_ENTRIES - 1;
/** The alternating `events` of the imported entries: each import after the first updates them all. */
const EVENTS = [['lockdown'], ['lockdown', 'member_ban']];

const ROWS = [
  {
    key: 'dryRun',
    request: '`POST …/settings/import`, dry run',
    limit: `${n(MAX_CHANGE_ENTRIES)} new \`auditlog_sinks\` entries (the most one change writes)`,
  },
  {
    key: 'create',
    request: '`POST …/settings/import`, applied',
    limit: `the same: ${MAX_CHANGE_ENTRIES} entries created`,
  },
  {
    key: 'update',
    request: '`POST …/settings/import`, applied',
    limit: `${MAX_CHANGE_ENTRIES} entries updated (${UPDATE_IMPORTS} per round)`,
  },
  {
    key: 'export',
    request: '`GET …/settings/export`',
    limit: `the guild with those ${MAX_CHANGE_ENTRIES} entries (and one more per round so far)`,
  },
  {
    key: 'view',
    request: '`POST …/settings` View',
    limit: `\`auditlog_sinks\`, limit ${MAX_VIEW_LIMIT}, right after a change (not cached)`,
  },
  {
    key: 'revisions',
    request: '`GET …/settings/revisions`',
    limit: `limit=${MAX_REVISIONS_PAGE}`,
  },
  {
    key: 'restore',
    request: '`POST …/settings/revisions/{n}/restore`',
    limit: `${n(MAX_RESTORED_REVISIONS)} later revisions read, ${MAX_CHANGE_ENTRIES} entries deleted`,
  },
  {
    key: 'membersCold',
    request: '`POST …/settings/import`, dry run',
    limit: `\`guildmembers\` naming ${MAX_NAMED_MEMBERS} users nobody looked up (none a member), the guild's platform data expired`,
  },
  {
    key: 'membersWarm',
    request: '`POST …/settings/import`, dry run',
    limit: 'the same again, at once',
  },
] as const;

type RowKey = (typeof ROWS)[number]['key'];

/** One measured request. */
interface Sample {
  ms: number;
  bodyBytes: number;
  /** Route templates of the platform calls it caused. */
  calls: string[];
  /** Latencies of the probe requests sent while it ran. */
  probe: number[];
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
}

class CostFailure extends Error {}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const platform = await BenchPlatform.start();
  const database = embeddedDatabase(options.database, 'bms-costs-');
  let service: ServiceProcess | null = null;
  try {
    service = await startServiceProcess({
      ...platform.serviceEnv(),
      ...database.env,
      PLATFORM_CACHE_TTL: String(PLATFORM_CACHE_TTL_S),
    });
    const pid = service.process.pid!;
    const owner = await platform.loginToken(service.baseUrl, DEMO_IDS.alice);
    const probe = new Probe(
      `${service.baseUrl}/guilds/${BENCH_IDS.guild}/settings/revisions?limit=1`,
      await platform.loginToken(service.baseUrl, BENCH_IDS.owner),
    );
    const run = new CostRun(service.baseUrl, owner, platform, probe, pid);
    const rssAtStart = rssMb(pid, 'VmRSS');
    for (let round = 0; round < options.warmup; round++) {
      await run.round(round, false);
      console.log(`warm-up round ${round + 1} of ${options.warmup} done`);
    }
    const baselineBefore = await probe.alone(BASELINE_MS);
    for (let round = 0; round < options.rounds; round++) {
      await run.round(options.warmup + round, true);
      console.log(`round ${round + 1} of ${options.rounds} done`);
    }
    const baselineAfter = await probe.alone(BASELINE_MS);
    const markdown = report(run, options, {
      before: baselineBefore,
      after: baselineAfter,
      rssAtStart,
      rssAtEnd: rssMb(pid, 'VmRSS'),
      rssHighWater: rssMb(pid, 'VmHWM'),
    });
    console.log(`\n${markdown}`);
    if (options.write) writeFileSync(join(ROOT, 'bench', 'costs-results.md'), markdown);
  } finally {
    if (service) await stopServiceProcess(service.process);
    await platform.close();
    database.remove();
  }
}

// --- Options -------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const options: Options = {
    rounds: integer('COSTS_ROUNDS', env.COSTS_ROUNDS ?? '5', 1),
    warmup: integer('COSTS_WARMUP', env.COSTS_WARMUP ?? '1', 0),
    database: databaseOption('COSTS_DATABASE', env.COSTS_DATABASE ?? 'memory'),
    write: false,
  };
  for (const arg of args) {
    const [name, value = ''] = arg.split('=', 2);
    if (name === '--rounds') options.rounds = integer(name, value, 1);
    else if (name === '--warmup') options.warmup = integer(name, value, 0);
    else if (name === '--database') options.database = databaseOption(name, value);
    else if (arg === '--write') options.write = true;
    else if (arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${arg}\n\n${USAGE}`);
  }
  return options;
}

// --- The probe -----------------------------------------------------------------------------------

/** Another guild's user sending a cheap request that needs the database, every PROBE_INTERVAL_MS. */
class Probe {
  private samples: { at: number; ms: number }[] = [];
  private running: Promise<void> | null = null;
  private stopping = false;
  private failure: Error | null = null;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  start(): void {
    this.samples = [];
    this.stopping = false;
    this.running = this.loop().catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    this.running = null;
    if (this.failure) throw this.failure;
  }

  /** The latencies of the probe requests under way at any time from `from` to `to` (performance.now()). */
  during(from: number, to: number): number[] {
    return this.samples.filter((s) => s.at < to && s.at + s.ms > from).map((s) => s.ms);
  }

  /** The probe's latencies with nothing else running. */
  async alone(ms: number): Promise<number[]> {
    this.start();
    await sleep(ms);
    await this.stop();
    return this.samples.map((s) => s.ms);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const at = performance.now();
      const response = await fetch(this.url, {
        headers: { Authorization: `Bearer ${this.token}` },
      });
      const text = await response.text();
      const ms = performance.now() - at;
      if (response.status !== 200) {
        throw new CostFailure(`the probe ${this.url} answered ${response.status}: ${text}`);
      }
      this.samples.push({ at, ms });
      await sleep(Math.max(0, PROBE_INTERVAL_MS - ms));
    }
  }
}

// --- The requests --------------------------------------------------------------------------------

/** An answer's JSON, and the size of the request's body. */
interface Answer {
  body: unknown;
  bodyBytes: number;
}

class CostRun {
  readonly samples = new Map<RowKey, Sample[]>(ROWS.map((row) => [row.key, []]));
  /** Entry ids handed out so far: every round imports entries of its own. */
  private nextId = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly platform: BenchPlatform,
    private readonly probe: Probe,
    private readonly pid: number,
  ) {}

  /**
   * One of each heavy request. The restore needs a revision of `auditlog_sinks` followed by
   * exactly MAX_RESTORED_REVISIONS others: one entry created by hand, then imports of
   * MAX_CHANGE_ENTRIES new entries (created, then updated UPDATE_IMPORTS times); the export, the
   * View and the revisions list are measured while the guild holds them; the restore deletes them.
   */
  async round(round: number, measured: boolean): Promise<void> {
    const measure = (key: RowKey, send: () => Promise<Answer>): Promise<Answer> =>
      this.measure(key, measured, send);
    await this.call('POST', `/guilds/${GUILD}/settings`, {
      setting: 'auditlog_sinks',
      operation: 'Create',
      fields: { channel: MOD_LOG_CHANNEL, events: ['lockdown'], enabled: true },
    });
    const [target] = (
      (await this.call('GET', `/guilds/${GUILD}/settings/revisions?limit=1`)).body as {
        revisions: { revision: number }[];
      }
    ).revisions;
    const document = (await this.call('GET', `/guilds/${GUILD}/settings/export`)).body as {
      settings: Record<string, unknown[]>;
    };
    const kept = document.settings.auditlog_sinks;
    let ids = Array.from({ length: MAX_CHANGE_ENTRIES }, () => this.entryId());
    const importing = (events: string[], dryRun: boolean): Promise<Answer> =>
      this.importRows(document, dryRun, {
        auditlog_sinks: [
          ...kept,
          ...ids.map((id) => ({ id, channel: MOD_LOG_CHANNEL, events, enabled: true })),
        ],
      });

    expectCount('dry run', await measure('dryRun', () => importing(EVENTS[0], true)), 'created');
    const created = await measure('create', () => importing(EVENTS[0], false));
    // The service chooses the ids of the entries it creates: the updates name those.
    ids = expectCount('import', created, 'created').map((row) => (row as { id: string }).id);
    for (let i = 1; i <= UPDATE_IMPORTS; i++) {
      const events = EVENTS[i % EVENTS.length];
      expectCount('update', await measure('update', () => importing(events, false)), 'updated');
    }
    const exported = await measure('export', () =>
      this.call('GET', `/guilds/${GUILD}/settings/export`),
    );
    const sinks = (exported.body as typeof document).settings.auditlog_sinks.length;
    if (sinks !== kept.length + MAX_CHANGE_ENTRIES) {
      throw new CostFailure(`the export holds ${sinks} auditlog_sinks entries`);
    }
    await measure('view', () =>
      this.call('POST', `/guilds/${GUILD}/settings`, {
        setting: 'auditlog_sinks',
        operation: 'View',
        fields: { limit: MAX_VIEW_LIMIT },
      }),
    );
    await measure('revisions', () =>
      this.call('GET', `/guilds/${GUILD}/settings/revisions?limit=${MAX_REVISIONS_PAGE}`),
    );
    const restored = await measure('restore', () =>
      this.call('POST', `/guilds/${GUILD}/settings/revisions/${target.revision}/restore`),
    );
    const undone = (restored.body as { revisions: unknown[] }).revisions.length;
    if (undone !== MAX_CHANGE_ENTRIES) {
      throw new CostFailure(`the restore of revision ${target.revision} made ${undone} changes`);
    }

    // Users no member of the guild is: each is looked up once, and "not a member" remembered.
    const members = Array.from({ length: MAX_NAMED_MEMBERS }, (_, i) =>
      (1_900_000_000_000_000_000n + BigInt(round * MAX_NAMED_MEMBERS + i)).toString(),
    );
    const guildmembers = members.map((user_id) => ({ user_id, perm_overrides: ['rpc.kick'] }));
    await sleep(CONTEXT_EXPIRY_MS);
    for (const key of ['membersCold', 'membersWarm'] as const) {
      await measure(key, () => this.importRows(document, true, { guildmembers }));
    }
  }

  /** Sends one request alone while the probe runs; records its time, calls and memory. */
  private async measure(
    key: RowKey,
    measured: boolean,
    send: () => Promise<Answer>,
  ): Promise<Answer> {
    this.probe.start();
    await sleep(5 * PROBE_INTERVAL_MS);
    const log = this.platform.emulator.requests;
    // The log drops its oldest requests past a bound: the last one seen marks where to read from.
    const lastSeen = log.at(-1);
    let rssPeak = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(this.pid, 'VmRSS'));
    }, MEMORY_SAMPLE_MS);
    const rssBefore = rssMb(this.pid, 'VmRSS');
    const started = performance.now();
    let answer: Answer;
    try {
      answer = await send();
    } finally {
      clearInterval(sampler);
    }
    const ended = performance.now();
    const rssAfter = rssMb(this.pid, 'VmRSS');
    const calls = log.slice(log.lastIndexOf(lastSeen!) + 1).filter((r) => !isProbeCall(r));
    await this.probe.stop();
    if (measured) {
      this.samples.get(key)!.push({
        ms: ended - started,
        bodyBytes: answer.bodyBytes,
        calls: calls.map((request) => request.route),
        probe: this.probe.during(started, ended),
        rssBefore,
        rssPeak: Math.max(rssPeak, rssBefore, rssAfter),
        rssAfter,
      });
    }
    return answer;
  }

  private importRows(
    document: object,
    dryRun: boolean,
    settings: Record<string, unknown[]>,
  ): Promise<Answer> {
    const body = { dry_run: dryRun, document: { ...document, settings } };
    return this.call('POST', `/guilds/${GUILD}/settings/import`, body);
  }

  /** One request of the guild's owner; anything but 200 aborts the benchmark. */
  private async call(method: string, path: string, body?: object): Promise<Answer> {
    const text = body ? JSON.stringify(body) : undefined;
    const bodyBytes = text ? Buffer.byteLength(text) : 0;
    if (bodyBytes > BODY_LIMIT_BYTES) {
      throw new CostFailure(`${method} ${path}: a body of ${bodyBytes} bytes is over the limit`);
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.token}`,
        ...(text ? { 'Content-Type': 'application/json' } : {}),
      },
      body: text,
    });
    const answer = await response.text();
    if (response.status !== 200) {
      throw new CostFailure(`${method} ${path} answered ${response.status}: ${answer}`);
    }
    return { body: JSON.parse(answer) as unknown, bodyBytes };
  }

  private entryId(): string {
    return `00000000-0000-4000-8000-${String(this.nextId++).padStart(12, '0')}`;
  }
}

/** A platform call about the probe's guild (the heavy requests are about the demo community). */
function isProbeCall(request: EmulatedRequest): boolean {
  return request.url.includes(BENCH_IDS.guild);
}

/** Checks that an import reported MAX_CHANGE_ENTRIES `auditlog_sinks` entries under `field`. */
function expectCount(what: string, answer: Answer, field: 'created' | 'updated'): unknown[] {
  const report = answer.body as { settings: Record<string, Record<string, unknown[]>> };
  const count = report.settings.auditlog_sinks[field].length;
  const refused = report.settings.auditlog_sinks.refused.length;
  if (count !== MAX_CHANGE_ENTRIES || refused > 0) {
    throw new CostFailure(`${what}: ${count} entries ${field}, ${refused} refused`);
  }
  return report.settings.auditlog_sinks[field];
}

// --- The report ----------------------------------------------------------------------------------

interface Baselines {
  /** Probe latencies with nothing else running, before and after the measured rounds. */
  before: number[];
  after: number[];
  rssAtStart: number;
  rssAtEnd: number;
  rssHighWater: number;
}

function report(run: CostRun, options: Options, baselines: Baselines): string {
  const base = p50(baselines.before);
  const lines = [
    '# What one request costs at its limits',
    '',
    `\`npm run bench:costs\`, ${new Date().toISOString()}, ${commitLine()}, Node.js ${process.version}.`,
    '',
    `- The built service in live mode against the benchmark's emulator, ${options.database === 'memory' ? '`DATABASE_URL=memory://`' : 'embedded database in a temporary `DATA_DIR`'}, rate limits off, \`PLATFORM_CACHE_TTL\` ${PLATFORM_CACHE_TTL_S} s. The demo community's owner sends the requests one at a time, every row once per round (the update ${UPDATE_IMPORTS} times): ${options.rounds} measured round${options.rounds === 1 ? '' : 's'} after ${options.warmup} discarded.`,
    `- Limits: ${n(MAX_CHANGE_ENTRIES)} entries one change writes, ${n(MAX_NAMED_MEMBERS)} users one change names, ${n(MAX_RESTORED_REVISIONS)} revisions one restore reads, ${n(MAX_IMPORT_ENTRIES)} entries and ${BODY_LIMIT_BYTES / 1024} KiB one import document holds, ${MAX_VIEW_LIMIT} rows a View answers, ${MAX_REVISIONS_PAGE} revisions a page holds.`,
    `- Probe: the Bench Guild's owner sends \`GET /guilds/{bench guild}/settings/revisions?limit=1\` every ${PROBE_INTERVAL_MS} ms while each request runs: another guild, the same process and database. The embedded engine runs in the service's thread on one connection, so the probe waits for the request's database work and its JavaScript alike. Baseline, the probe alone: p50 ${ms(base)} / max ${ms(Math.max(...baselines.before))} ms before the rounds (${baselines.before.length} requests), p50 ${ms(p50(baselines.after))} / max ${ms(Math.max(...baselines.after))} ms after them.`,
    `- Platform calls: the emulator's log from the request's start to its answer, the probe's own left out. Memory: the service's VmRSS right before and after each request (medians) and its highest, sampled every ${MEMORY_SAMPLE_MS} ms while the request ran. The service held ${baselines.rssAtStart} MiB after login and ${baselines.rssAtEnd} MiB at the end (the database in memory grows by every revision), ${baselines.rssHighWater} MiB at its highest (VmHWM).`,
    '',
    '| request | at the limit | body KiB | platform calls | request ms p50 / max | probe ms p50 / max meanwhile | probe p50 ÷ baseline | RSS MiB before → peak, after |',
    '| --- | --- | --: | --- | --: | --: | --: | --: |',
  ];
  for (const row of ROWS) {
    const samples = run.samples.get(row.key)!;
    const times = samples.map((s) => s.ms);
    const probe = samples.flatMap((s) => s.probe);
    const kib = Math.max(...samples.map((s) => s.bodyBytes)) / 1024;
    lines.push(
      `| ${row.request} | ${row.limit} | ${kib > 0 ? kib.toFixed(1) : '–'} | ${callsFigure(samples)} | ${ms(p50(times))} / ${ms(Math.max(...times))} | ${probe.length > 0 ? `${ms(p50(probe))} / ${ms(Math.max(...probe))}` : '–'} | ${probe.length > 0 ? `${(p50(probe) / base).toFixed(1)}×` : '–'} | ${p50(samples.map((s) => s.rssBefore))} → ${Math.max(...samples.map((s) => s.rssPeak))}, ${p50(samples.map((s) => s.rssAfter))} |`,
    );
  }
  lines.push(
    '',
    `Platform calls per route template and request (min–max over the rounds). A request pays for opening the guild (the guild, its channels and active threads, the bot's and the caller's members) when the guild's platform data is older than ${PLATFORM_CACHE_TTL_S} s; a round's requests mostly follow each other closer than that, and the member lookups are sent ${CONTEXT_EXPIRY_MS / 1000} s after the last request, so that they always pay it:`,
    '',
    ...ROWS.map(
      (row) => `- ${row.request}, ${row.limit}: ${routesFigure(run.samples.get(row.key)!)}`,
    ),
  );
  return `${lines.join('\n')}\n`;
}

/** `n` or `min–max` platform calls per request. */
function callsFigure(samples: Sample[]): string {
  return range(samples.map((s) => s.calls.length));
}

function routesFigure(samples: Sample[]): string {
  const routes = [...new Set(samples.flatMap((s) => s.calls))].sort();
  if (routes.length === 0) return 'none';
  return routes
    .map((route) => `\`${route}\` ${range(samples.map((s) => countOf(s.calls, route)))}`)
    .join(', ');
}

function countOf(values: string[], value: string): number {
  return values.filter((v) => v === value).length;
}

function range(values: number[]): string {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? String(low) : `${low}–${high}`;
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function n(value: number): string {
  return value.toLocaleString('en');
}

function ms(value: number): string {
  return value < 10 ? value.toFixed(1) : String(Math.round(value));
}

/** The commit the tree was built from. */
function commitLine(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return `commit ${commit}`;
  } catch {
    return 'commit unknown';
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
