import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { freshPostgresDatabase, type BenchDatabase } from './database';
import { integer, readArguments } from './options';
import { residentMemory } from './resident-memory';
import { callService } from './service-api';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:membership-scale`: one instance holding the membership of a very large bot
 * (docs/bot-membership.md), 1,000,000 guilds by default, their states not fed. On PostgreSQL
 * (BENCH_DATABASE_URL's server, a database of its own), the built service in live mode:
 *
 * 1. A full snapshot, cold: every shard's snapshot (`--shards`, in parts of 4,000 ids, up to
 *    `--concurrency` shards at once, as a bot's processes send them after identifying), timed from
 *    the first part to the instance holding every guild in memory (`GET /internal/guild-state`).
 * 2. The instance's memory then: resident (RSS) and V8 heap after a full collection, per guild.
 * 3. A full snapshot again (every shard reconnected: the same guilds, a new `snapshot_at`).
 * 4. A second instance started on the same database: from its start to holding every guild.
 * 5. The database's size per guild (`bot_guilds` with its indexes).
 *
 * Prints a Markdown report; with --write also writes it to bench/membership-scale-results.md.
 */

const USAGE = `npm run bench:membership-scale -- [options]

  --guilds=<n>        guilds of the bot (default 1000000)
  --shards=<n>        its shards (default 400: 2,500 guilds each, the platform's most per shard)
  --concurrency=<n>   shards sending their snapshot at once (default 16, max_concurrency 16)
  --write             also write the report to bench/membership-scale-results.md
  --help              this text`;

const PART = 4_000;
/** The services' log, kept after the run: what a refused part was refused for. */
const LOG_FILE = join(tmpdir(), 'bms-membership-scale.log');
const REDIRECT = DEFAULT_REDIRECT_URI;

interface Options {
  guilds: number;
  shards: number;
  concurrency: number;
  write: boolean;
}

interface Memory {
  rssMb: number;
  heapMb: number;
}

interface SnapshotRun {
  ms: number;
  /** Each shard's parts, first sent to last answered. */
  shardMs: number[];
  /** Parts the service refused (sent again), with the start of its answer. */
  refusals: string[];
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const emulator = await PlatformEmulator.start(DEMO_SEED);
  const database = await freshPostgresDatabase('bms_mscale');
  if (!database) throw new Error('PostgreSQL cannot be reached (BENCH_DATABASE_URL)');
  const services: ServiceProcess[] = [];
  try {
    const { application } = DEMO_SEED;
    const env: Record<string, string> = {
      DISCORD_BOT_TOKEN: application.bot_token,
      DISCORD_CLIENT_ID: application.id,
      DISCORD_CLIENT_SECRET: application.secret,
      DISCORD_API_URL: emulator.apiUrl,
      ROOT_USERS: DEMO_IDS.demoUser,
      LOG_LEVEL: 'warn',
      // A shard reports once here (its snapshot): the feed stays live across the whole run.
      BOT_FEED_STALE_AFTER: '3600',
      DATABASE_URL: database.url,
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    const first = await startServiceProcess(env, LOG_FILE);
    services.push(first);
    const token = await apiToken(first.baseUrl, emulator);
    const shards = guildIdsByShard(options);
    const idle = await memoryOf(first);
    console.log(`idle: ${JSON.stringify(idle)}; sending ${options.guilds} guilds…`);

    const cold = await fullSnapshot(first.baseUrl, token, shards, options.concurrency);
    const held = await memoryOf(first);
    console.log(`cold snapshot ${cold.ms} ms; ${JSON.stringify(held)}`);
    const again = await fullSnapshot(first.baseUrl, token, shards, options.concurrency);
    console.log(`again ${again.ms} ms`);

    const bootStarted = performance.now();
    const second = await startServiceProcess(env, LOG_FILE);
    services.push(second);
    const healthyMs = performance.now() - bootStarted;
    await heldEverywhere(second.baseUrl, token, options.guilds);
    const bootMs = performance.now() - bootStarted;
    const secondMemory = await memoryOf(second);
    const storage = await storageOf(database);
    const markdown = report(options, {
      idle,
      held,
      cold,
      again,
      healthyMs,
      bootMs,
      secondMemory,
      storage,
    });
    console.log(`\n${markdown}`);
    if (options.write) {
      writeFileSync(join(ROOT, 'bench', 'membership-scale-results.md'), markdown);
    }
  } finally {
    for (const service of services) await stopServiceProcess(service.process);
    await database.drop();
    await emulator.close();
  }
}

/** Guild ids that the platform's rule puts on each shard, `guilds / shards` each. */
function guildIdsByShard(options: Options): string[][] {
  const perShard = Math.ceil(options.guilds / options.shards);
  const shards: string[][] = Array.from({ length: options.shards }, () => []);
  for (let i = 0; i < options.guilds; i++) {
    const shard = Math.floor(i / perShard);
    const k = i % perShard;
    // (id >> 22) % shards === shard; the timestamp part stays within the platform's range.
    const timestamp = 1_000_000_000n + BigInt(k) * BigInt(options.shards) + BigInt(shard);
    shards[shard].push(String(timestamp << 22n));
  }
  return shards;
}

/** Every shard's snapshot, `concurrency` shards at once; done when the instance holds them all. */
async function fullSnapshot(
  baseUrl: string,
  token: string,
  shards: string[][],
  concurrency: number,
): Promise<SnapshotRun> {
  const started = performance.now();
  const snapshotAt = new Date().toISOString();
  const shardMs: number[] = [];
  const refusals: string[] = [];
  let next = 0;
  const sender = async (): Promise<void> => {
    for (let shard = next++; shard < shards.length; shard = next++) {
      const ids = shards[shard];
      const shardStarted = performance.now();
      for (let from = 0; from < ids.length; from += PART) {
        const part = {
          shard_count: shards.length,
          snapshot_at: snapshotAt,
          total: ids.length,
          guild_ids: ids.slice(from, from + PART),
        };
        // A refused part is sent again, as the bot's reporter does; each refusal is counted.
        for (let attempt = 1; ; attempt++) {
          try {
            await call(baseUrl, 'PUT', `/internal/shards/${shard}/guilds`, token, part);
            break;
          } catch (error) {
            refusals.push((error as Error).message.slice(0, 120));
            if (attempt >= 5) throw error;
            await sleep(1_000);
          }
        }
      }
      shardMs.push(performance.now() - shardStarted);
      if (shardMs.length % 50 === 0) console.log(`  ${shardMs.length} shards in`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  await heldEverywhere(baseUrl, token, shards.flat().length);
  return { ms: performance.now() - started, shardMs, refusals };
}

/** Waits until the instance holds `guilds` present guilds in memory, and its feed is live. */
async function heldEverywhere(baseUrl: string, token: string, guilds: number): Promise<void> {
  for (;;) {
    const status = (await call(baseUrl, 'GET', '/internal/guild-state', token)) as {
      guilds: number;
      membership_live: boolean;
    };
    if (status.guilds === guilds && status.membership_live) return;
    await sleep(50);
  }
}

async function memoryOf(service: ServiceProcess): Promise<Memory> {
  const pid = service.process.pid!;
  process.kill(pid, 'SIGUSR1');
  let target: string | undefined;
  for (let attempt = 0; attempt < 50 && !target; attempt++) {
    try {
      const list = (await (
        await fetch(`http://127.0.0.1:${service.inspectorPort}/json/list`)
      ).json()) as { webSocketDebuggerUrl: string }[];
      target = list[0]?.webSocketDebuggerUrl;
    } catch {
      await sleep(100);
    }
  }
  if (!target) throw new Error('no inspector answered');
  const socket = new WebSocket(target);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let id = 0;
  const send = (method: string, params: object = {}): Promise<unknown> =>
    new Promise((resolve) => {
      const mine = ++id;
      const listener = (event: { data: string }): void => {
        const message = JSON.parse(event.data) as { id?: number; result?: unknown };
        if (message.id !== mine) return;
        socket.removeEventListener('message', listener);
        resolve(message.result);
      };
      socket.addEventListener('message', listener);
      socket.send(JSON.stringify({ id: mine, method, params }));
    });
  try {
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
    const { result } = (await send('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
    })) as { result: { value: string } };
    const usage = JSON.parse(result.value) as NodeJS.MemoryUsage;
    return { rssMb: residentMemory(pid).rssMb, heapMb: usage.heapUsed / 2 ** 20 };
  } finally {
    socket.close();
  }
}

async function storageOf(
  database: BenchDatabase,
): Promise<{ tableBytes: number; indexBytes: number; rows: number }> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE bot_guilds');
    const { rows } = await client.query<{ table: string; indexes: string; rows: string }>(
      `SELECT pg_table_size('bot_guilds') AS table, pg_indexes_size('bot_guilds') AS indexes,
         (SELECT count(*) FROM bot_guilds) AS rows`,
    );
    return {
      tableBytes: Number(rows[0].table),
      indexBytes: Number(rows[0].indexes),
      rows: Number(rows[0].rows),
    };
  } finally {
    await client.end();
  }
}

async function apiToken(baseUrl: string, emulator: PlatformEmulator): Promise<string> {
  const code = emulator.issueCode({ userId: DEMO_IDS.demoUser, redirectUri: REDIRECT });
  const login = (await call(baseUrl, 'POST', '/oauth2', undefined, {
    code,
    redirect_uri: REDIRECT,
  })) as { token: string };
  const session = (await call(baseUrl, 'POST', '/sessions', login.token, {
    name: 'bench bot',
    type: 'api',
    expiry: 3600,
  })) as { token: string };
  return session.token;
}

function call(
  baseUrl: string,
  method: string,
  path: string,
  token?: string,
  body?: object,
): Promise<unknown> {
  return callService(baseUrl, method, path, { token, body });
}

function report(
  options: Options,
  run: {
    idle: Memory;
    held: Memory;
    cold: SnapshotRun;
    again: SnapshotRun;
    healthyMs: number;
    bootMs: number;
    secondMemory: Memory;
    storage: { tableBytes: number; indexBytes: number; rows: number };
  },
): string {
  const perGuild = (mb: number): string =>
    `${Math.round((mb * 2 ** 20) / options.guilds)} B a guild`;
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const rate = (ms: number): string => `${Math.round(options.guilds / (ms / 1000))} guilds/s`;
  const shardP = (run: SnapshotRun, q: number): string => {
    const sorted = [...run.shardMs].sort((a, b) => a - b);
    return `${Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))])} ms`;
  };
  const { storage } = run;
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .toString();
  } catch {
    // not a checkout
  }
  return [
    '# Membership of a very large bot: one instance',
    '',
    `\`npm run bench:membership-scale\`, ${new Date().toISOString()}, commit ${commit}, Node.js ${process.version}; PostgreSQL on this machine; 2 CPUs shared with other work (load average at the end ${load}).`,
    '',
    `${options.guilds.toLocaleString('en')} guilds on ${options.shards} shards (${Math.ceil(options.guilds / options.shards)} each), snapshots in parts of ${PART.toLocaleString('en')} ids, ${options.concurrency} shards at once; no guild state fed.`,
    '',
    '| | measured |',
    '| --- | --- |',
    `| full snapshot, cold: first part to every guild held | ${s(run.cold.ms)} (${rate(run.cold.ms)}); a shard p50 / p99 ${shardP(run.cold, 0.5)} / ${shardP(run.cold, 0.99)} |`,
    `| full snapshot again (every shard reconnected) | ${s(run.again.ms)} (${rate(run.again.ms)}); a shard p50 / p99 ${shardP(run.again, 0.5)} / ${shardP(run.again, 0.99)} |`,
    `| parts refused and sent again: cold; again | ${run.cold.refusals.length}; ${run.again.refusals.length}${run.again.refusals[0] ? ` (${run.again.refusals[0]})` : ''} |`,
    `| the instance idle: RSS; heap after a full collection | ${Math.round(run.idle.rssMb)} MiB; ${run.idle.heapMb.toFixed(1)} MiB |`,
    `| holding every guild | ${Math.round(run.held.rssMb)} MiB; ${run.held.heapMb.toFixed(1)} MiB |`,
    `| … growth per guild | RSS ${perGuild(run.held.rssMb - run.idle.rssMb)}; heap ${perGuild(run.held.heapMb - run.idle.heapMb)} |`,
    `| a second instance on the same database: healthy; holding every guild | ${s(run.healthyMs)}; ${s(run.bootMs)} |`,
    `| … its memory then: RSS; heap | ${Math.round(run.secondMemory.rssMb)} MiB; ${run.secondMemory.heapMb.toFixed(1)} MiB |`,
    `| \`bot_guilds\`: table; indexes (${storage.rows.toLocaleString('en')} rows) | ${(storage.tableBytes / 2 ** 20).toFixed(0)} MiB; ${(storage.indexBytes / 2 ** 20).toFixed(0)} MiB; ${Math.round((storage.tableBytes + storage.indexBytes) / storage.rows)} B a guild |`,
    '',
  ].join('\n');
}

function parseOptions(args: string[]): Options {
  const values = readArguments(args, ['guilds', 'shards', 'concurrency', 'write'], USAGE);
  const number = (name: string, fallback: number): number => {
    const value = values.get(name);
    return value === undefined ? fallback : integer(`--${name}`, value, 1);
  };
  return {
    guilds: number('guilds', 1_000_000),
    shards: number('shards', 400),
    concurrency: number('concurrency', 16),
    write: values.has('write'),
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
