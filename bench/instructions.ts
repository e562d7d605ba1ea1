import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_ADMIN_URL, freshPostgresDatabase } from './database';
import { BenchPlatform } from './bench-platform';
import { selectedScenarios, type Scenario } from './scenarios';
import { unusedPort } from 'test/support/ports';

/**
 * `npm run bench:instructions`: user-space instructions per request, counted by valgrind's
 * callgrind, for each scenario in the service (on PostgreSQL) and in both baselines answering the
 * same bytes. Unlike requests/s, the counts do not move with the machine's pace (a few percent
 * between runs, from JIT and GC timing), so they judge a change of a few percent. Kernel work
 * (the socket writes) is not counted; the baselines pay it too. Needs valgrind and PostgreSQL at
 * BENCH_DATABASE_URL; takes a few minutes (everything runs 20 to 50 times slower under valgrind).
 * `BENCH_SCENARIOS=View` counts only the scenarios whose name contains one of the words.
 */
const ROOT = join(__dirname, '..', '..');
/**
 * Requests counted per server and scenario, after WARM_UP uncounted ones (the JIT settles). Enough
 * that a full garbage collection falling inside the window or not moves the count little: with
 * 2,000, one did, and a change showed the wrong way round.
 */
const REQUESTS = Number(process.env.BENCH_INSTRUCTION_REQUESTS ?? 10_000);
const WARM_UP = 5000;
/** How long a server may take to start under valgrind: 60 to 170 s were seen on a busy machine. */
const START_BOUND_MS = 600_000;
const HOST = '127.0.0.1';
/** valgrind's gdbserver and callgrind_control name their pipes after these variables. */
const VALGRIND_ENV = { USER: 'root', LOGNAME: 'root', HOST };

interface Counted {
  process: ChildProcess;
  pid: number;
  url: string;
  outputDir: string;
}

async function main(): Promise<void> {
  const database = await freshPostgresDatabase('bms_instructions');
  if (!database) throw new Error(`PostgreSQL is not reachable at ${BENCH_ADMIN_URL}`);
  const rows: string[] = [];
  const platform = await BenchPlatform.start();
  try {
    for (const scenario of selectedScenarios()) {
      const service = await startCounted(
        [join(ROOT, 'dist', 'src', 'main.js')],
        {
          DATABASE_URL: database.url,
          TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
          RATE_LIMITS_ENABLED: 'false',
          ...platform.serviceEnv(),
        },
        '/healthz',
      );
      let headers: Record<string, string>;
      let body: string;
      let serviceCount: number;
      try {
        headers = await scenario.prepare(service.url, platform);
        body = await answer(service.url, scenario, headers);
        serviceCount = await count(service, scenario, headers);
      } finally {
        await stop(service);
      }
      const baselines: Record<string, number> = {};
      for (const [name, file, args] of [
        ['bare node:http', 'baseline-server.js', [body]],
        ['minimal Nest', 'minimal-nest-app.js', [scenario.method, scenario.path, body]],
      ] as const) {
        const baseline = await startCounted([join(__dirname, file)], {}, scenario.path, args);
        try {
          // The same request bytes as the service got.
          baselines[name] = await count(baseline, scenario, headers);
        } finally {
          await stop(baseline);
        }
      }
      const baseline = scenario.target.baseline === 'bare' ? 'bare node:http' : 'minimal Nest';
      rows.push(
        `| ${scenario.name} | ${kilo(serviceCount)} | ${kilo(baselines['minimal Nest'])} | ${kilo(baselines['bare node:http'])} | ${(baselines[baseline] / serviceCount).toFixed(2)} × ${baseline} |`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    await platform.close();
    await database.drop();
  }
  console.log(
    [
      `\nInstructions per request (callgrind, user space, ${REQUESTS} requests after ${WARM_UP} uncounted; service on PostgreSQL):\n`,
      '| scenario | service | minimal Nest | bare node:http | baseline ÷ service |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

/** Starts a server under callgrind (counting from the start, zeroed before the measurement). */
async function startCounted(
  script: string[],
  env: Record<string, string>,
  readyPath: string,
  args: readonly string[] = [],
): Promise<Counted> {
  const port = await unusedPort();
  const outputDir = mkdtempSync(join(tmpdir(), 'bms-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(outputDir, 'callgrind.%p')}`,
      process.execPath,
      ...script,
      ...(args.length > 0 ? [String(port), ...args] : []),
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...VALGRIND_ENV, PORT: String(port), ...env },
      stdio: 'ignore',
    },
  );
  const url = `http://${HOST}:${port}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await fetch(url + readyPath).then((res) => res.arrayBuffer());
      break;
    } catch {
      if (attempt * 250 > START_BOUND_MS) {
        throw new Error(`${script.join(' ')} did not start under valgrind`);
      }
      await sleep(250);
    }
  }
  return { process: child, pid: child.pid!, url, outputDir };
}

/** Instructions per request over REQUESTS requests, after WARM_UP uncounted ones. */
async function count(
  server: Counted,
  scenario: Scenario,
  headers: Record<string, string>,
): Promise<number> {
  await send(server.url, scenario, headers, WARM_UP);
  callgrindControl('-z', server.pid);
  await send(server.url, scenario, headers, REQUESTS);
  callgrindControl('-d', server.pid);
  // The dump is written by the server's own thread: wait for its totals.
  for (let attempt = 0; attempt < 120; attempt++) {
    const totals = readdirSync(server.outputDir)
      .map((file) => /^totals:\s+(\d+)/m.exec(readFileSync(join(server.outputDir, file), 'utf8')))
      .filter((match) => match !== null)
      .map((match) => Number(match[1]));
    if (totals.length > 0) return Math.max(...totals) / REQUESTS;
    await sleep(250);
  }
  throw new Error('callgrind wrote no totals');
}

function callgrindControl(option: string, pid: number): void {
  execFileSync('callgrind_control', [option, String(pid)], {
    env: { ...process.env, ...VALGRIND_ENV },
    stdio: 'ignore',
  });
}

async function stop(server: Counted): Promise<void> {
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGKILL');
  await exited;
  rmSync(server.outputDir, { recursive: true, force: true });
}

/** `n` requests over 4 keep-alive connections; every answer must be a 200. */
async function send(
  url: string,
  scenario: Scenario,
  headers: Record<string, string>,
  n: number,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let sent = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(
        url + scenario.path,
        { method: scenario.method, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(scenario.body);
    });
  const worker = async (): Promise<void> => {
    while (sent < n) {
      sent++;
      await one();
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  agent.destroy();
}

async function answer(
  url: string,
  scenario: Scenario,
  headers: Record<string, string>,
): Promise<string> {
  const res = await fetch(url + scenario.path, {
    method: scenario.method,
    headers,
    body: scenario.body,
  });
  if (!res.ok) throw new Error(`${scenario.name}: ${res.status}`);
  return res.text();
}

function kilo(instructions: number): string {
  return `${Math.round(instructions / 1000)}k`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
