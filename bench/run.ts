import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { BENCH_ADMIN_URL, freshPostgresDatabase } from './database';
import { selectedScenarios, type Scenario } from './scenarios';
import {
  heapUsage,
  profileMarkdown,
  profileWhile,
  summariseProfile,
  type HeapUsage,
} from './profile';
import { prepareSoakMix } from './soak';
import { BenchPlatform } from './bench-platform';
import { residentMemory, rssMb, type ResidentMemory } from './resident-memory';
import { unusedPort } from 'test/support/ports';
import {
  ROOT,
  SERVICE_NODE_OPTIONS,
  startServiceProcess,
  stopServiceProcess,
} from './service-process';

/**
 * `npm run bench`: every scenario against the built service on the embedded default and on
 * PostgreSQL (when one answers at BENCH_DATABASE_URL, default the local server), each beside a bare
 * `node:http` server returning the same body, measured in the same run. Prints a table and writes
 * bench/results.md. Figures move between runs; compare ratios within one run.
 */
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
/** Measurements of each server per scenario, taken in turn; the median one is reported. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** The soak: mixed traffic at a fixed overall rate; `BENCH_SOAK_DURATION=0` skips it. */
const SOAK_DURATION_S = Number(process.env.BENCH_SOAK_DURATION ?? 300);
const SOAK_RATE = Number(process.env.BENCH_SOAK_RATE ?? 500);
const SOAK_CONNECTIONS = 10;
/** Seconds of load per CPU profile, after the measurements; `BENCH_PROFILE_DURATION=0` skips them. */
const PROFILE_DURATION_S = Number(process.env.BENCH_PROFILE_DURATION ?? 5);
/** `BENCH_ENGINES=embedded` or `postgres` measures one engine only. */
const ENGINES = (process.env.BENCH_ENGINES ?? 'embedded,postgres').split(',');

interface Measured {
  engine: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  baselineRps: number;
  baselineP99: number;
  /** The minimal NestJS-on-Fastify app (one global guard) answering the same bytes. */
  nestRps: number;
  target: Scenario['target'];
  peakRssMb: number;
  /** Every round's req/s, in the order measured: how far a run's figures spread. */
  rounds: { service: number[]; nest: number[]; bare: number[] };
}

interface Soaked {
  engine: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  rssStartMb: number;
  /** At the end of the soak, with its split into mapped files' pages and the process's own. */
  end: Measurement;
  peakRssMb: number;
}

/** One start of the service: time to a healthy /healthz and resident memory once up. */
interface Boot extends Measurement {
  engine: string;
  /** `live` is the measured service, talking to the bench's platform instead of its own emulator. */
  start: 'first' | 'restart' | 'live';
  ms: number;
}

/** Resident memory, and the V8 heap where it was read (after the resident memory). */
interface Measurement extends ResidentMemory {
  heap?: HeapUsage;
}

interface EngineResults {
  boots: Boot[];
  scenarios: Measured[];
  soak: Soaked | null;
  /** A CPU profile summary per scenario, in Markdown. */
  profiles: string[];
}

async function main(): Promise<void> {
  const floor = stackFloor();
  console.log(
    `stack floor: ${floor.libraries.rssMb} MiB resident with the libraries alone, ${floor.runtime.rssMb} MiB with none`,
  );
  const platform = await BenchPlatform.start();
  try {
    report(await benchEngines(platform), floor);
  } finally {
    await platform.close();
  }
}

async function benchEngines(platform: BenchPlatform): Promise<EngineResults[]> {
  const results: EngineResults[] = [];
  if (ENGINES.includes('embedded')) {
    const embedded = (): Promise<BenchData> => {
      const dataDir = mkdtempSync(join(tmpdir(), 'bms-bench-'));
      return Promise.resolve({
        env: { DATA_DIR: dataDir },
        drop: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
      });
    };
    results.push(await benchEngine('embedded (PGlite)', embedded, platform));
  }
  if (!ENGINES.includes('postgres')) return results;
  const postgres = async (): Promise<BenchData | null> => {
    const database = await freshPostgresDatabase('bms_bench');
    return (
      database && {
        env: {
          DATABASE_URL: database.url,
          TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
        },
        drop: () => database.drop(),
      }
    );
  };
  const probe = await postgres();
  if (!probe) {
    console.log(`PostgreSQL not reachable at ${BENCH_ADMIN_URL}: skipped`);
    return results;
  }
  await probe.drop();
  results.push(await benchEngine('PostgreSQL', postgres as () => Promise<BenchData>, platform));
  return results;
}

/** A new, empty database for one service (a data directory, or a PostgreSQL database). */
interface BenchData {
  env: Record<string, string>;
  drop(): Promise<void>;
}

interface RunningService {
  process: ChildProcess;
  baseUrl: string;
  inspectorPort: number;
  boot: Boot;
}

/**
 * Starts the built service as `npm start` does and waits for a healthy /healthz, timing it from the
 * spawn; the resident memory is read a second after it answers, then (except for the measured
 * service, whose inspector stays off until its profiles) its V8 heap.
 */
async function startService(
  engine: string,
  start: Boot['start'],
  env: Record<string, string>,
): Promise<RunningService> {
  const {
    process: child,
    baseUrl,
    inspectorPort,
    healthyAfterMs: ms,
  } = await startServiceProcess(env);
  await sleep(1000);
  const boot: Boot = { engine, start, ms, ...residentMemory(child.pid) };
  if (start !== 'live') boot.heap = await heapUsage(child.pid!, inspectorPort);
  console.log(
    `${engine}: ${START_LABELS[start]}, healthy after ${ms} ms, ${boot.rssMb} MiB resident`,
  );
  return { process: child, baseUrl, inspectorPort, boot };
}

const START_LABELS: Readonly<Record<Boot['start'], string>> = {
  first: 'first start',
  restart: 'restart',
  live: 'measured start (live mode)',
};

async function benchEngine(
  engine: string,
  freshData: () => Promise<BenchData>,
  platform: BenchPlatform,
): Promise<EngineResults> {
  // The default (demo mode), as `npm start` runs it: a first start on a new data directory (or
  // database), then a restart on it. Both are timed and measured.
  const demo = await freshData();
  let boots: Boot[];
  try {
    const first = await startService(engine, 'first', demo.env);
    await stopServiceProcess(first.process);
    const restarted = await startService(engine, 'restart', demo.env);
    await stopServiceProcess(restarted.process);
    boots = [first.boot, restarted.boot];
  } finally {
    await demo.drop();
  }
  // The measured service talks to the bench's platform, whose seed adds the bench guild, as a
  // service in production talks to the real one. Its database is new: the demo's bot reported
  // its own guilds through the membership feed, which would answer 404 for the bench guild.
  const live = await freshData();
  const running = await startService(engine, 'live', { ...live.env, ...platform.serviceEnv() });
  const { process: service, baseUrl, inspectorPort } = running;
  try {
    const scenarios: Measured[] = [];
    for (const scenario of selectedScenarios()) {
      scenarios.push(await benchScenario(engine, scenario, baseUrl, service, platform));
    }
    const soaked =
      SOAK_DURATION_S > 0
        ? await soak(engine, { baseUrl, service, inspectorPort, platform })
        : null;
    const profiles: string[] = [];
    if (PROFILE_DURATION_S > 0) {
      for (const scenario of selectedScenarios()) {
        profiles.push(
          await profileScenario(engine, scenario, { baseUrl, service, inspectorPort, platform }),
        );
      }
    }
    return { boots, scenarios, soak: soaked, profiles };
  } finally {
    await stopServiceProcess(service);
    await live.drop();
  }
}

async function benchScenario(
  engine: string,
  scenario: Scenario,
  baseUrl: string,
  service: ChildProcess,
  platform: BenchPlatform,
): Promise<Measured> {
  const headers = await scenario.prepare(baseUrl, platform);
  const request = { method: scenario.method, headers, body: scenario.body };
  const sample = await fetch(baseUrl + scenario.path, request);
  if (!sample.ok) throw new Error(`${scenario.name}: ${sample.status} ${await sample.text()}`);
  const body = await sample.text();

  const bareServer = await startBaseline('baseline-server.js', [body]);
  const nestServer = await startBaseline('minimal-nest-app.js', [
    scenario.method,
    scenario.path,
    body,
  ]);
  try {
    // Warm all three up, then measure them in turn, ROUNDS times: the machine's pace drifts over
    // a run, and each figure is the median of its rounds.
    const bareUrl = bareServer.url + scenario.path;
    const nestUrl = nestServer.url + scenario.path;
    const serviceUrl = baseUrl + scenario.path;
    for (const url of [bareUrl, nestUrl, serviceUrl]) await load(url, request, 2);
    const bare: autocannon.Result[] = [];
    const nest: autocannon.Result[] = [];
    const measured: autocannon.Result[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await load(bareUrl, request, DURATION_S));
      nest.push(await load(nestUrl, request, DURATION_S));
      measured.push(await load(serviceUrl, request, DURATION_S));
    }
    const rates = (runs: autocannon.Result[]): number[] =>
      runs.map((run) => Math.round(run.requests.average));
    const rounds = { service: rates(measured), nest: rates(nest), bare: rates(bare) };
    console.log(
      `${engine}: ${scenario.name}: service ${rounds.service.join(' ')}; minimal Nest ${rounds.nest.join(' ')}; bare ${rounds.bare.join(' ')} req/s`,
    );
    const median = medianRun(measured);
    return {
      engine,
      scenario: scenario.name,
      rps: median.requests.average,
      p50: median.latency.p50,
      p99: median.latency.p99,
      baselineRps: medianRun(bare).requests.average,
      baselineP99: medianRun(bare).latency.p99,
      nestRps: medianRun(nest).requests.average,
      target: scenario.target,
      peakRssMb: rssMb(service.pid, 'VmHWM'),
      rounds,
    };
  } finally {
    bareServer.process.kill();
    nestServer.process.kill();
  }
}

/** Starts a baseline server (a compiled file beside this one) on a free port; resolves once it listens. */
async function startBaseline(
  file: string,
  args: string[],
): Promise<{ url: string; process: ChildProcess }> {
  const port = await unusedPort();
  const child = fork(join(__dirname, file), [String(port), ...args], { stdio: 'ignore' });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before listening`)));
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

/** The service's CPU profile under the scenario's load, summarised by self time. */
async function profileScenario(
  engine: string,
  scenario: Scenario,
  target: {
    baseUrl: string;
    service: ChildProcess;
    inspectorPort: number;
    platform: BenchPlatform;
  },
): Promise<string> {
  const { baseUrl, service, inspectorPort, platform } = target;
  const headers = await scenario.prepare(baseUrl, platform);
  const request = { method: scenario.method, headers, body: scenario.body };
  const profile = await profileWhile(service.pid!, inspectorPort, async () => {
    await load(baseUrl + scenario.path, request, PROFILE_DURATION_S);
  });
  return profileMarkdown(`${engine}: ${scenario.name}`, summariseProfile(profile, ROOT, 15));
}

/**
 * Mixed traffic at a fixed rate for SOAK_DURATION_S, with the service's memory before and after
 * (and its V8 heap after).
 */
async function soak(
  engine: string,
  target: {
    baseUrl: string;
    service: ChildProcess;
    inspectorPort: number;
    platform: BenchPlatform;
  },
): Promise<Soaked> {
  const { baseUrl, service, inspectorPort, platform } = target;
  const requests = await prepareSoakMix(baseUrl, platform);
  const options = { url: baseUrl, requests, connections: SOAK_CONNECTIONS, overallRate: SOAK_RATE };
  checked(await autocannon({ ...options, duration: 5 }), 'soak warm-up');
  const rssStartMb = rssMb(service.pid, 'VmRSS');
  console.log(`${engine}: soaking for ${SOAK_DURATION_S} s at ${SOAK_RATE} req/s...`);
  const result = checked(await autocannon({ ...options, duration: SOAK_DURATION_S }), 'soak');
  const end: Measurement = residentMemory(service.pid);
  const peakRssMb = rssMb(service.pid, 'VmHWM');
  end.heap = await heapUsage(service.pid!, inspectorPort);
  return {
    engine,
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rssStartMb,
    end,
    peakRssMb,
  };
}

/** The run with the median throughput. */
function medianRun(runs: autocannon.Result[]): autocannon.Result {
  const sorted = [...runs].sort((a, b) => a.requests.average - b.requests.average);
  return sorted[Math.floor(sorted.length / 2)];
}

function checked(result: autocannon.Result, what: string): autocannon.Result {
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${what}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return result;
}

async function load(
  url: string,
  request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  duration: number,
): Promise<autocannon.Result> {
  return checked(await autocannon({ url, ...request, connections: CONNECTIONS, duration }), url);
}

/** Resident memory targets: after boot and after the soak. */
function rssTarget(engine: string): number {
  return engine === 'PostgreSQL' ? 130 : 300;
}

/** Boot time targets of the embedded default (none on PostgreSQL, whose server is already up). */
function bootTimeTarget(boot: Boot): number | null {
  if (boot.engine === 'PostgreSQL') return null;
  return boot.start === 'first' ? 3000 : 2000;
}

function met(ok: boolean, target: string): string {
  return `${target} ${ok ? '✓' : '✗'}`;
}

/** The target and whether this run met it. */
function targetOf(row: Measured): string {
  const baseline = row.target.baseline === 'bare' ? row.baselineRps : row.nestRps;
  const met = row.rps / baseline >= row.target.ratio;
  return `≥ ${row.target.ratio.toFixed(2)} × ${row.target.baseline} ${met ? '✓' : '✗'}`;
}

/** Each round's figures and ratios: the spread a single run's medians come from. */
function roundsTable(rows: Measured[]): string {
  const ratios = (service: number[], baseline: number[]): string =>
    service.map((rps, i) => (rps / baseline[i]).toFixed(2)).join(' ');
  return [
    'Every round, in the order measured (req/s; the ratios pair each round with its own baselines):',
    '',
    '| engine | scenario | service | minimal Nest | bare node:http | ÷ minimal Nest | ÷ bare |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      ({ engine, scenario, rounds: r }) =>
        `| ${engine} | ${scenario} | ${r.service.join(' ')} | ${r.nest.join(' ')} | ${r.bare.join(' ')} | ${ratios(r.service, r.nest)} | ${ratios(r.service, r.bare)} |`,
    ),
  ].join('\n');
}

/**
 * Resident memory of a process holding only the libraries the service loads
 * (bench/stack-floor.ts), and of one holding nothing.
 */
interface StackFloor {
  libraries: ResidentMemory;
  runtime: ResidentMemory;
}

function stackFloor(): StackFloor {
  const measure = (...args: string[]): ResidentMemory =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [...SERVICE_NODE_OPTIONS, join(__dirname, 'stack-floor.js'), ...args],
        { cwd: ROOT, encoding: 'utf8' },
      ),
    ) as ResidentMemory;
  return { libraries: measure(), runtime: measure('--runtime-only') };
}

/**
 * "139 (60 + 79; heap 61, 53 used)": resident memory, then mapped files' pages and the process's
 * own, and the V8 heap (part of the process's own) where it was read.
 */
function split({ rssMb, fileMb, anonMb, heap }: Measurement): string {
  const ofHeap = heap ? `; heap ${heap.totalMb}, ${heap.usedMb} used` : '';
  return `${rssMb} (${fileMb} + ${anonMb}${ofHeap})`;
}

function report(results: EngineResults[], floor: StackFloor): void {
  const rows = results.flatMap((result) => result.scenarios);
  const header =
    '| engine | scenario | req/s | p50 ms | p99 ms | bare node:http req/s | minimal Nest req/s | ÷ minimal Nest | ÷ bare | target | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.engine} | ${r.scenario} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${Math.round(r.baselineRps)} | ${Math.round(r.nestRps)} | ${(r.rps / r.nestRps).toFixed(2)} | ${(r.rps / r.baselineRps).toFixed(2)} | ${targetOf(r)} | ${r.peakRssMb} |`,
  );
  const table = [header, ...lines, '', roundsTable(rows)].join('\n');
  const boots = results.flatMap((result) => result.boots);
  const bootTable = [
    'Start: the built service spawned as `npm start` runs it, timed to its first healthy `/healthz`; resident memory (VmRSS) a second later. "first" is a new data directory (embedded) or an empty database (PostgreSQL), "restart" the same one again.',
    '',
    `The stack's floor: a process that loads only the libraries the service loads at boot on PostgreSQL (\`bench/stack-floor.ts\`), with the same Node.js options, holds ${split(floor.libraries)} MiB a second later; one that loads nothing, ${split(floor.runtime)} MiB.`,
    '',
    "Memory is given as resident (mapped files + the process's own; V8 heap): the mapped files are the pages of the Node.js binary and shared libraries the process has touched (code, read-only data), the process's own its V8 heap, malloc and stacks. The V8 heap (reserved, and in use) is read through the inspector after the resident memory; for the measured service only after its soak, so that its inspector stays off until then.",
    '',
    '| engine | start | to healthy ms | target | RSS after boot MiB | target |',
    '|---|---|---|---|---|---|',
    ...boots.map((b) => {
      const time = bootTimeTarget(b);
      return `| ${b.engine} | ${b.start} | ${b.ms} | ${time ? met(b.ms <= time, `≤ ${time}`) : '–'} | ${split(b)} | ${met(b.rssMb <= rssTarget(b.engine), `≤ ${rssTarget(b.engine)}`)} |`;
    }),
  ].join('\n');
  const soaks = results.flatMap((result) => (result.soak ? [result.soak] : []));
  const soakTable = soaks.length
    ? [
        `Soak: ${SOAK_DURATION_S} s of mixed traffic at ${SOAK_RATE} req/s over ${SOAK_CONNECTIONS} connections (sessions/@me, settings View, the user's guilds, bot-stats, a shard report written, config), after a 5 s warm-up.`,
        '',
        '| engine | requests | req/s | p50 ms | p99 ms | RSS at start MiB | RSS at end MiB | target | peak RSS MiB |',
        '|---|---|---|---|---|---|---|---|---|',
        ...soaks.map(
          (s) =>
            `| ${s.engine} | ${s.requests} | ${Math.round(s.rps)} | ${s.p50} | ${s.p99} | ${s.rssStartMb} | ${split(s.end)} | ${met(s.end.rssMb <= rssTarget(s.engine), `≤ ${rssTarget(s.engine)}`)} | ${s.peakRssMb} |`,
        ),
      ].join('\n')
    : 'Soak skipped (BENCH_SOAK_DURATION=0).';
  const profiles = results.flatMap((result) => result.profiles);
  const profileText = profiles.length
    ? `## CPU profiles\n\nThe service under each scenario's load for ${PROFILE_DURATION_S} s (50 connections), sampled every 200 µs through the inspector after the measurements; the top frames by self time.\n\n${profiles.join('\n\n')}\n`
    : '';
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const text = `# Benchmark results\n\n${new Date().toISOString()} on ${machine}.\nautocannon, ${CONNECTIONS} connections, ${DURATION_S} s per measurement; per scenario the bare \`node:http\` server, the minimal Nest app and the service, all answering the same body, are measured in turn ${ROUNDS} times in the same run, and each figure is its median round. Rate limits off; request logging on (JSON lines to a discarded stdout).\n\n${bootTable}\n\n${table}\n\n${soakTable}\n${profileText ? `\n${profileText}` : ''}`;
  console.log(`\n${bootTable}\n\n${table}\n\n${soakTable}\n`);
  writeFileSync(join(ROOT, 'bench', 'results.md'), text);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
