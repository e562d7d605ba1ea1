import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { SCENARIOS, type Scenario } from './scenarios';
import { prepareSoakMix } from './soak';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';

/**
 * `npm run bench`: every scenario against the built service on the embedded default and on
 * PostgreSQL (when one answers at BENCH_DATABASE_URL, default the local server), each beside a bare
 * `node:http` server returning the same body, measured in the same run. Prints a table and writes
 * bench/results.md. Figures move between runs; compare ratios within one run.
 */
const ROOT = join(__dirname, '..', '..');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** The soak: mixed traffic at a fixed overall rate; `BENCH_SOAK_DURATION=0` skips it. */
const SOAK_DURATION_S = Number(process.env.BENCH_SOAK_DURATION ?? 300);
const SOAK_RATE = Number(process.env.BENCH_SOAK_RATE ?? 500);
const SOAK_CONNECTIONS = 10;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Measured {
  engine: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  baselineRps: number;
  baselineP99: number;
  peakRssMb: number;
}

interface Soaked {
  engine: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  rssStartMb: number;
  rssEndMb: number;
  peakRssMb: number;
}

interface EngineResults {
  scenarios: Measured[];
  soak: Soaked | null;
}

async function main(): Promise<void> {
  const results: EngineResults[] = [];
  results.push(await benchEngine('embedded (PGlite)', {}));
  const database = await freshPostgresDatabase();
  if (database) {
    try {
      results.push(
        await benchEngine('PostgreSQL', {
          DATABASE_URL: database.url,
          TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
        }),
      );
    } finally {
      await database.drop();
    }
  } else {
    console.log(`PostgreSQL not reachable at ${ADMIN_URL}: skipped`);
  }
  report(results);
}

async function benchEngine(engine: string, env: Record<string, string>): Promise<EngineResults> {
  const port = 4100 + Math.floor(Math.random() * 500);
  const service = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'bms-bench-')),
      RATE_LIMITS_ENABLED: 'false',
      // The soak's shard reports come from the demo user's API token.
      ROOT_USERS: DEMO_IDS.demoUser,
      ...env,
    },
    stdio: 'ignore',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(baseUrl);
    const scenarios: Measured[] = [];
    for (const scenario of SCENARIOS) {
      scenarios.push(await benchScenario(engine, scenario, baseUrl, service));
    }
    const soaked = SOAK_DURATION_S > 0 ? await soak(engine, baseUrl, service) : null;
    return { scenarios, soak: soaked };
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
  }
}

async function benchScenario(
  engine: string,
  scenario: Scenario,
  baseUrl: string,
  service: ChildProcess,
): Promise<Measured> {
  const headers = await scenario.prepare(baseUrl);
  const request = { method: scenario.method, headers, body: scenario.body };
  const sample = await fetch(baseUrl + scenario.path, request);
  if (!sample.ok) throw new Error(`${scenario.name}: ${sample.status} ${await sample.text()}`);
  const body = await sample.text();

  const baselinePort = 4700 + Math.floor(Math.random() * 500);
  const baseline = fork(join(__dirname, 'baseline-server.js'), [String(baselinePort), body], {
    stdio: 'ignore',
  });
  await new Promise((resolve) => baseline.once('message', resolve));
  try {
    // Warm both up, then measure the baseline and the service back to back.
    const baselineUrl = `http://127.0.0.1:${baselinePort}${scenario.path}`;
    await load(baselineUrl, request, 2);
    await load(baseUrl + scenario.path, request, 2);
    const bare = await load(baselineUrl, request, DURATION_S);
    const measured = await load(baseUrl + scenario.path, request, DURATION_S);
    return {
      engine,
      scenario: scenario.name,
      rps: measured.requests.average,
      p50: measured.latency.p50,
      p99: measured.latency.p99,
      baselineRps: bare.requests.average,
      baselineP99: bare.latency.p99,
      peakRssMb: rssMb(service.pid, 'VmHWM'),
    };
  } finally {
    baseline.kill();
  }
}

/** Mixed traffic at a fixed rate for SOAK_DURATION_S, with the service's memory before and after. */
async function soak(engine: string, baseUrl: string, service: ChildProcess): Promise<Soaked> {
  const requests = await prepareSoakMix(baseUrl);
  const options = { url: baseUrl, requests, connections: SOAK_CONNECTIONS, overallRate: SOAK_RATE };
  checked(await autocannon({ ...options, duration: 5 }), 'soak warm-up');
  const rssStartMb = rssMb(service.pid, 'VmRSS');
  console.log(`${engine}: soaking for ${SOAK_DURATION_S} s at ${SOAK_RATE} req/s...`);
  const result = checked(await autocannon({ ...options, duration: SOAK_DURATION_S }), 'soak');
  return {
    engine,
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rssStartMb,
    rssEndMb: rssMb(service.pid, 'VmRSS'),
    peakRssMb: rssMb(service.pid, 'VmHWM'),
  };
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

/** The service's resident set now (VmRSS) or at its peak (VmHWM), in MiB. */
function rssMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

async function waitForHealthy(baseUrl: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error('the service did not start');
}

async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const admin = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const name = `bms_bench_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

function report(results: EngineResults[]): void {
  const rows = results.flatMap((result) => result.scenarios);
  const header =
    '| engine | scenario | req/s | p50 ms | p99 ms | bare node:http req/s | bare p99 ms | ratio | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.engine} | ${r.scenario} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${Math.round(r.baselineRps)} | ${r.baselineP99} | ${(r.rps / r.baselineRps).toFixed(2)} | ${r.peakRssMb} |`,
  );
  const table = [header, ...lines].join('\n');
  const soaks = results.flatMap((result) => (result.soak ? [result.soak] : []));
  const soakTable = soaks.length
    ? [
        `Soak: ${SOAK_DURATION_S} s of mixed traffic at ${SOAK_RATE} req/s over ${SOAK_CONNECTIONS} connections (sessions/@me, settings View, the user's guilds, bot-stats, a shard report written, config), after a 5 s warm-up.`,
        '',
        '| engine | requests | req/s | p50 ms | p99 ms | RSS at start MiB | RSS at end MiB | peak RSS MiB |',
        '|---|---|---|---|---|---|---|---|',
        ...soaks.map(
          (s) =>
            `| ${s.engine} | ${s.requests} | ${Math.round(s.rps)} | ${s.p50} | ${s.p99} | ${s.rssStartMb} | ${s.rssEndMb} | ${s.peakRssMb} |`,
        ),
      ].join('\n')
    : 'Soak skipped (BENCH_SOAK_DURATION=0).';
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const text = `# Benchmark results\n\n${new Date().toISOString()} on ${machine}.\nautocannon, ${CONNECTIONS} connections, ${DURATION_S} s per measurement; the ratio is the service's requests/s over a bare \`node:http\` server returning the same body, measured in the same run. Rate limits off; request logging on (JSON lines to a discarded stdout).\n\n${table}\n\n${soakTable}\n`;
  console.log(`\n${table}\n\n${soakTable}\n`);
  writeFileSync(join(ROOT, 'bench', 'results.md'), text);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
