import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { BENCH_IDS, BENCH_ROLE_IDS, BenchPlatform } from './bench-platform';
import { compareAlternating, requestsPerSecond, type Scenario } from './throughput';
import { rssMb } from './resident-memory';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:events`: what event streams cost.
 *
 * 1. The hot path with idle streams: GET /config and GET /sessions/@me on the built service
 *    (embedded default, live mode, metrics off), measured in alternating rounds with no stream
 *    open and with a guild stream and a bot health stream open and idle; medians and their ratio.
 * 2. A soak: STREAMS streams open (half following the bench guild, half the bot's health) for
 *    SOAK_S seconds while a settings change is committed every 500 ms and a shard changes status
 *    every second, every event reaching every stream; resident memory sampled every 10 s, and
 *    every stream checked to have received every event.
 *
 * Writes bench/events-results.md.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
const CONNECTIONS = 50;
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const SOAK_S = Number(process.env.BENCH_SOAK_DURATION ?? 300);

interface Stream {
  request: ClientRequest;
  events: number;
  heartbeats: number;
  ended: boolean;
}

async function main(): Promise<void> {
  const platform = await BenchPlatform.start();
  let service: ServiceProcess | null = null;
  try {
    service = await startServiceProcess({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'bms-events-')),
      EVENTS_MAX_STREAMS: String(STREAMS + 10),
      EVENTS_MAX_STREAMS_PER_USER: String(STREAMS),
      EVENTS_MAX_STREAMS_PER_ADDRESS: String(STREAMS),
      ...platform.serviceEnv(),
    });
    const { baseUrl } = service;
    const owner = await platform.loginToken(baseUrl, BENCH_IDS.owner);
    const root = await apiToken(baseUrl, await platform.loginToken(baseUrl, DEMO_IDS.demoUser));

    const hotPath = await measureHotPath(baseUrl, owner);
    // BENCH_SOAK_DURATION=0: the hot path only.
    const soak =
      SOAK_S > 0 ? await soakStreams(service, owner, root) : 'Not run (BENCH_SOAK_DURATION=0).';
    const markdown = [
      '# Event streams: cost and soak',
      '',
      `\`npm run bench:events\`, ${new Date().toISOString()}: the built service (embedded default, live mode against the bench platform, metrics off).`,
      '',
      `## The hot path with idle streams`,
      '',
      `${ROUNDS} alternating rounds of ${DURATION_S} s at ${CONNECTIONS} connections, with no stream open and with a guild stream and a bot health stream open and idle; medians.`,
      '',
      '| scenario | no stream req/s | idle streams req/s | with ÷ without | rounds without | rounds with |',
      '|---|---|---|---|---|---|',
      ...hotPath,
      '',
      `## ${STREAMS} open streams for ${SOAK_S} s`,
      '',
      `${STREAMS / 2} streams following the bench guild (one user, owner) and ${STREAMS / 2} following the bot's health; a settings change every 500 ms and a shard status change every second, each event sent to every stream that may see it.`,
      '',
      soak,
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'bench', 'events-results.md'), markdown);
    console.log(`\n${markdown}`);
  } finally {
    if (service) await stopServiceProcess(service.process);
    await platform.close();
  }
}

async function measureHotPath(baseUrl: string, owner: string): Promise<string[]> {
  const scenarios: Scenario[] = [
    { name: 'GET /config', path: '/config', headers: {} },
    {
      name: 'GET /sessions/@me',
      path: '/sessions/@me',
      headers: { Authorization: `Bearer ${owner}` },
    },
  ];
  const options = { connections: CONNECTIONS, durationS: DURATION_S };
  const rows: string[] = [];
  for (const scenario of scenarios) {
    const comparison = await compareAlternating(
      scenario.name,
      ROUNDS,
      () => requestsPerSecond(baseUrl, scenario, options),
      async () => {
        const streams = [
          openStream(baseUrl, `/guilds/${BENCH_IDS.guild}/events`, owner),
          openStream(baseUrl, '/bot-stats/events'),
        ];
        await sleep(200);
        try {
          return await requestsPerSecond(baseUrl, scenario, options);
        } finally {
          streams.forEach((stream) => stream.request.destroy());
        }
      },
    );
    console.log(`${scenario.name}: with idle streams ÷ without ${comparison.ratio.toFixed(3)}`);
    rows.push(comparison.row);
  }
  return rows;
}

async function soakStreams(service: ServiceProcess, owner: string, root: string): Promise<string> {
  const { baseUrl } = service;
  const pid = service.process.pid;
  const before = rssMb(pid, 'VmRSS');
  const streams: Stream[] = [];
  for (let i = 0; i < STREAMS; i++) {
    streams.push(
      i % 2 === 0
        ? openStream(baseUrl, `/guilds/${BENCH_IDS.guild}/events`, owner)
        : openStream(baseUrl, '/bot-stats/events'),
    );
    if (i % 100 === 99) await sleep(50);
  }
  await sleep(3_000);
  const opened = rssMb(pid, 'VmRSS');
  const samples: { at: number; rss: number }[] = [{ at: 0, rss: opened }];
  let changes = 0;
  let reports = 0;
  const started = Date.now();
  const role = BENCH_ROLE_IDS[0];
  await settings(baseUrl, owner, 'Create', { role_id: role, perms: [], index: 1 });
  const writer = (async () => {
    while (Date.now() - started < SOAK_S * 1000) {
      await settings(baseUrl, owner, 'Update', {
        role_id: role,
        perms: changes % 2 === 0 ? ['rpc.view'] : [],
      });
      changes++;
      await sleep(500);
    }
  })();
  const reporter = (async () => {
    while (Date.now() - started < SOAK_S * 1000) {
      await shardReport(baseUrl, root, reports % 2 === 0 ? 'Ready' : 'Reconnecting');
      reports++;
      await sleep(1_000);
    }
  })();
  while (Date.now() - started < SOAK_S * 1000) {
    await sleep(10_000);
    const rss = rssMb(pid, 'VmRSS');
    samples.push({ at: Math.round((Date.now() - started) / 1000), rss });
    console.log(
      `${samples.at(-1)!.at} s: ${rss} MiB, ${streams.filter((s) => !s.ended).length} streams open`,
    );
  }
  await writer;
  await reporter;
  await sleep(3_000);
  const guild = streams.filter((_, i) => i % 2 === 0);
  const bot = streams.filter((_, i) => i % 2 === 1);
  const open = streams.filter((stream) => !stream.ended).length;
  const guildEvents = guild.map((stream) => stream.events);
  const botEvents = bot.map((stream) => stream.events);
  streams.forEach((stream) => stream.request.destroy());
  const peak = rssMb(pid, 'VmHWM');
  const after = rssMb(pid, 'VmRSS');
  const rows = [
    `| resident memory before the streams | ${before} MiB |`,
    `| with ${STREAMS} streams open | ${opened} MiB |`,
    `| at the end of the soak | ${samples.at(-1)!.rss} MiB |`,
    `| peak (VmHWM) | ${peak} MiB |`,
    `| after the streams closed | ${after} MiB |`,
    `| streams open at the end | ${open} of ${STREAMS} |`,
    `| settings changes / events per guild stream (min–max) | ${changes + 1} / ${Math.min(...guildEvents)}–${Math.max(...guildEvents)} |`,
    `| shard reports / events per bot stream (min–max) | ${reports} / ${Math.min(...botEvents)}–${Math.max(...botEvents)} |`,
  ];
  return [
    '| figure | value |',
    '|---|---|',
    ...rows,
    '',
    `Resident memory every 10 s: ${samples.map((s) => `${s.at} s ${s.rss}`).join(', ')} (MiB).`,
  ].join('\n');
}

/** A stream read as bytes, counting its events (each `data:` line) and heartbeats. */
function openStream(baseUrl: string, path: string, token?: string): Stream {
  const url = new URL(path, baseUrl);
  const stream: Stream = {
    request: null as unknown as ClientRequest,
    events: 0,
    heartbeats: 0,
    ended: false,
  };
  stream.request = httpRequest(
    {
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      agent: false,
      headers: {
        Accept: 'text/event-stream',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
    },
    (response) => {
      if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        stream.events += chunk.split('\ndata: ').length - 1 + (chunk.startsWith('data: ') ? 1 : 0);
        stream.heartbeats += chunk.split(': heartbeat').length - 1;
      });
      response.on('close', () => (stream.ended = true));
    },
  );
  stream.request.on('error', () => (stream.ended = true));
  stream.request.end();
  return stream;
}

async function settings(
  baseUrl: string,
  token: string,
  operation: string,
  fields: object,
): Promise<void> {
  const res = await fetch(`${baseUrl}/guilds/${BENCH_IDS.guild}/settings`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ setting: 'guildroles', operation, fields }),
  });
  if (!res.ok) throw new Error(`settings ${operation}: ${res.status} ${await res.text()}`);
}

async function shardReport(baseUrl: string, token: string, status: string): Promise<void> {
  const res = await fetch(`${baseUrl}/internal/shards/0`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      status,
      real_latency: 40,
      guilds: 3,
      users: 12,
      uptime: 60,
      total_uptime: 600,
    }),
  });
  if (!res.ok) throw new Error(`shard report: ${res.status} ${await res.text()}`);
}

async function apiToken(baseUrl: string, login: string): Promise<string> {
  const res = await fetch(`${baseUrl}/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${login}` },
    body: JSON.stringify({ name: 'bench reporter', type: 'api', expiry: 3600 }),
  });
  if (!res.ok) throw new Error(`api token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
