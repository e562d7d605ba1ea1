import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { UNCONFIRMED_COMMIT_MESSAGE } from 'src/common/errors/outage';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import {
  PrivatePostgres,
  PrivateRedis,
  privatePostgresUnavailable,
  privateRedisUnavailable,
} from 'test/support/private-servers';
import { TcpProxy } from 'test/support/tcp-proxy';
import { integer, readArguments } from './options';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:faults`: the service's fault suite. Two instances of the built service run on a
 * PostgreSQL and a Redis of the suite's own (a private cluster made with initdb in a temporary
 * directory, a private redis-server, each on a free port), reached through a fault proxy
 * (test/support/tcp-proxy.ts) that can cut, stall and resume their connections, with the platform
 * emulator as the chat platform. For each fault, fresh instances on a fresh database run a
 * workload, the fault strikes a third of the way in, and every operation is recorded and checked:
 *
 * - 4 editors (2 per instance) update the same setting entries with the row `version` they read;
 * - 2 creators (1 per instance) create API tokens and send shard reports;
 * - a follower reads the guild's event stream, alternating instances, resuming with
 *   `Last-Event-ID`;
 * - `/readyz` is polled on both instances.
 *
 * Checked: no acknowledged write lost or applied twice, and none refused or unanswered applied more
 * than once; revisions gapless; no read older than an update acknowledged more than
 * `STALE_BOUND_MS` before it began (docs/caching.md, "What bounds staleness"); the follower's
 * events in order, each once, gaps only with a `reset`; no 5xx but the documented outage answers
 * (500 with `Retry-After`, naming what is down, or saying a change's COMMIT went unanswered).
 * Prints a table per fault and exits with 1 on any anomaly.
 */

const FAULTS = [
  'kill-instance',
  'postgres-stop',
  'postgres-stall',
  'redis-restart',
  'redis-cuts',
] as const;
type FaultKind = (typeof FAULTS)[number];

/** One run: a fault, and for a stall how long it lasts. */
interface Fault {
  kind: FaultKind;
  name: string;
  stallS?: number;
}

const USAGE = `npm run bench:faults -- [options]

  --faults=<a,b,…>   which faults (default all): ${FAULTS.join(', ')}
  --before-s=<s>     workload before the fault (env FAULTS_BEFORE_S; default 5)
  --after-s=<s>      workload after the fault ends (env FAULTS_AFTER_S; default 8)
  --stop-s=<s>       how long PostgreSQL stays stopped (env FAULTS_STOP_S; default 10)
  --stalls=<s,s,…>   how long PostgreSQL stalls, one run each (env FAULTS_STALLS; default 15,25)
  --redis-down-s=<s> how long Redis stays killed before it restarts empty (default 2)
  --cuts=<n>         Redis connection cuts (default 10)
  --write            also write the tables to bench/faults-results.md
  --help             this text

  A full run: --before-s=32 --after-s=50 (about 90 s a fault, 12 minutes in all); the default
  takes about 3 minutes.`;

/** A read that misses an update acknowledged this long before it began is stale past the bound. */
const STALE_BOUND_MS = 7_000;
/** An answer not received in this time is no answer. */
const REQUEST_TIMEOUT_MS = 30_000;
const GUILD = DEMO_IDS.community;
const OWNER = DEMO_IDS.alice;
/** The demo community's moderation log: a channel the bot can serve as an audit-log sink. */
const SINK_CHANNEL = '1100000000000000132';
const ENTRIES = 2;
const TOKEN_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

interface Options {
  faults: Fault[];
  beforeS: number;
  afterS: number;
  stopS: number;
  redisDownS: number;
  cuts: number;
  write: boolean;
}

/** `none`: no answer, or one saying the change may have been applied (an unconfirmed COMMIT). */
type Outcome = 'ok' | 'refused' | 'none';

interface Op {
  kind: 'view' | 'update' | 'token' | 'shard' | 'ready';
  instance: number;
  start: number;
  end: number;
  outcome: Outcome;
  status: number;
  /** The body, when JSON. */
  body: unknown;
  retryAfter: string | null;
}

interface FaultReport {
  fault: string;
  lateReads: number;
  /** The oldest of them: how long after the update's answer the read began. */
  lateMaxMs: number;
  ops: Op[];
  anomalies: string[];
  fiveHundreds: number;
  normalAfterMs: number | null;
  faultMs: number;
  reconnects: number;
  events: number;
}

// --- HTTP -----------------------------------------------------------------------------------------

class Fleet {
  constructor(readonly urls: string[]) {}

  async call(
    instance: number,
    kind: Op['kind'],
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
  ): Promise<Op> {
    const start = Date.now();
    try {
      const res = await fetch(`${this.urls[instance]}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return {
        kind,
        instance,
        start,
        end: Date.now(),
        // A change whose COMMIT went unanswered may have been applied: as good as no answer.
        outcome: res.ok
          ? 'ok'
          : (parsed as { message?: unknown } | undefined)?.message === UNCONFIRMED_COMMIT_MESSAGE
            ? 'none'
            : 'refused',
        status: res.status,
        body: parsed,
        retryAfter: res.headers.get('retry-after'),
      };
    } catch {
      return {
        kind,
        instance,
        start,
        end: Date.now(),
        outcome: 'none',
        status: 0,
        body: undefined,
        retryAfter: null,
      };
    }
  }
}

// --- The workload ---------------------------------------------------------------------------------

interface Sink {
  id: string;
  enabled: boolean;
  version: number;
}

interface Workload {
  ops: Op[];
  /** Per entry: each acknowledged version and when its answer came. */
  acked: Map<string, Map<number, number>>;
  /** Updates per entry that got no answer, and those refused (may not be applied). */
  unanswered: Map<string, number>;
  tokenNames: { name: string; outcome: Outcome; sessionId?: string }[];
  shardAcked: Map<number, number>;
  staleReads: string[];
  /** Reads that missed an acknowledged update, within the bound (a lost publish). */
  lateReads: number;
  /** The oldest of them: how long after the update's answer the read began. */
  lateMaxMs: number;
  followerIssues: string[];
  followerIds: number[];
  reconnects: number;
}

async function editor(
  fleet: Fleet,
  instance: number,
  token: string,
  entries: string[],
  work: Workload,
  running: () => boolean,
): Promise<void> {
  let turn = 0;
  while (running()) {
    const entry = entries[turn++ % entries.length];
    const view = await fleet.call(instance, 'view', 'POST', `/guilds/${GUILD}/settings`, token, {
      setting: 'auditlog_sinks',
      operation: 'View',
      fields: { id: entry },
    });
    work.ops.push(view);
    if (view.outcome !== 'ok') {
      await sleep(100);
      continue;
    }
    const [row] = (view.body as { data: Sink[] }).data;
    if (!row) {
      work.staleReads.push(`entry ${entry} missing from a View on instance ${instance}`);
      continue;
    }
    checkFresh(work, entry, row.version, view.start, instance);
    const update = await fleet.call(
      instance,
      'update',
      'POST',
      `/guilds/${GUILD}/settings`,
      token,
      {
        setting: 'auditlog_sinks',
        operation: 'Update',
        fields: { id: entry, enabled: !row.enabled, version: row.version },
      },
    );
    work.ops.push(update);
    if (update.outcome === 'ok') {
      const stored = (update.body as { data: Sink }).data;
      const versions = work.acked.get(entry) ?? new Map<number, number>();
      if (versions.has(stored.version)) {
        work.staleReads.push(`entry ${entry}: version ${stored.version} acknowledged twice`);
      }
      if (stored.version !== row.version + 1) {
        work.staleReads.push(
          `entry ${entry}: an update read at version ${row.version} was stored as ${stored.version}`,
        );
      }
      versions.set(stored.version, update.end);
      work.acked.set(entry, versions);
    } else if (update.outcome === 'none') {
      work.unanswered.set(entry, (work.unanswered.get(entry) ?? 0) + 1);
    }
  }
}

/** A read is stale past the bound when an update it misses was acknowledged long before it began. */
function checkFresh(
  work: Workload,
  entry: string,
  version: number,
  readStart: number,
  instance: number,
): void {
  for (const [acked, at] of work.acked.get(entry) ?? []) {
    if (acked <= version || at >= readStart) continue;
    if (readStart - at > STALE_BOUND_MS) {
      work.staleReads.push(
        `instance ${instance} read entry ${entry} at version ${version}, ${readStart - at} ms after version ${acked} was acknowledged`,
      );
    } else {
      work.lateReads++;
      work.lateMaxMs = Math.max(work.lateMaxMs, readStart - at);
    }
    return;
  }
}

async function creator(
  fleet: Fleet,
  instance: number,
  login: string,
  apiToken: string,
  work: Workload,
  running: () => boolean,
): Promise<void> {
  let n = 0;
  while (running()) {
    n++;
    const name = `faults-${instance}-${n}`;
    const created = await fleet.call(instance, 'token', 'POST', '/sessions', login, {
      name,
      type: 'api',
      expiry: 3600,
    });
    work.ops.push(created);
    work.tokenNames.push({
      name,
      outcome: created.outcome,
      sessionId: (created.body as { session_id?: string } | undefined)?.session_id,
    });
    const shard = instance;
    const report = await fleet.call(
      instance,
      'shard',
      'PUT',
      `/internal/shards/${shard}`,
      apiToken,
      {
        status: 'Ready',
        real_latency: 40,
        guilds: n,
        users: n * 10,
        uptime: n,
        total_uptime: n,
      },
    );
    work.ops.push(report);
    if (report.outcome === 'ok') work.shardAcked.set(shard, n);
    await sleep(150);
  }
}

async function poller(
  fleet: Fleet,
  instance: number,
  work: Workload,
  running: () => boolean,
): Promise<void> {
  while (running()) {
    work.ops.push(await fleet.call(instance, 'ready', 'GET', '/readyz', null));
    await sleep(200);
  }
}

/**
 * Follows the guild's event stream, alternating instances on every reconnect, resuming with
 * `Last-Event-ID`: each `settings` event must be the one after the last, or follow a `reset`.
 */
async function follower(
  fleet: Fleet,
  token: string,
  work: Workload,
  running: () => boolean,
): Promise<void> {
  let last: number | null = null;
  let instance = 0;
  const controller = new AbortController();
  const stop = setInterval(() => {
    if (!running()) controller.abort();
  }, 100);
  try {
    while (running()) {
      try {
        const res = await fetch(`${fleet.urls[instance]}/guilds/${GUILD}/events`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            ...(last === null ? {} : { 'last-event-id': String(last) }),
          },
          signal: controller.signal,
        });
        if (res.ok && res.body) {
          let buffer = '';
          const decoder = new TextDecoder();
          // A stream the instance stops feeding (its database gone) is left after 15 s.
          let lastData = Date.now();
          const watchdog = setInterval(() => {
            if (Date.now() - lastData > 15_000) void reader.cancel();
          }, 1_000);
          const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
          try {
            for (;;) {
              const chunk = await reader.read();
              if (chunk.done) break;
              lastData = Date.now();
              buffer += decoder.decode(chunk.value, { stream: true });
              let end: number;
              while ((end = buffer.indexOf('\n\n')) !== -1) {
                const block = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                last = take(block, last, work);
              }
            }
          } finally {
            clearInterval(watchdog);
          }
        } else {
          await res.body?.cancel();
        }
      } catch {
        // the stream broke: reconnect
      }
      if (!running()) break;
      work.reconnects++;
      instance = (instance + 1) % fleet.urls.length;
      await sleep(300);
    }
  } finally {
    clearInterval(stop);
  }
}

/** One SSE block: its event name and id checked against the last id; returns the new last id. */
function take(block: string, last: number | null, work: Workload): number | null {
  let type = 'message';
  let id: number | null = null;
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    if (line.startsWith('id:')) id = Number(line.slice(3).trim());
  }
  if (id === null) return last;
  if (type === 'ready' || type === 'reset') return id;
  if (last !== null && id <= last) {
    work.followerIssues.push(`revision ${id} received again after ${last}`);
    return last;
  }
  if (last !== null && id !== last + 1) {
    work.followerIssues.push(`revisions ${last + 1}–${id - 1} skipped without a reset`);
  }
  work.followerIds.push(id);
  return id;
}

// --- One fault ------------------------------------------------------------------------------------

interface Servers {
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  emulator: PlatformEmulator;
}

async function runFault(fault: Fault, options: Options, servers: Servers): Promise<FaultReport> {
  const { postgres, redis, emulator } = servers;
  if (!redis.running) await redis.restart();
  const database = `faults_${fault.name.replaceAll('-', '_')}_${Date.now()}`;
  await adminQuery(postgres.url, `CREATE DATABASE ${database}`);
  const pgProxy = await TcpProxy.start({ host: '127.0.0.1', port: postgres.port });
  const redisProxy = await TcpProxy.start({ host: '127.0.0.1', port: redis.port });
  const env: Record<string, string> = {
    DATABASE_URL: `postgres://postgres@127.0.0.1:${pgProxy.port}/${database}`,
    REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
    REDIS_KEY_PREFIX: `faults-${randomBytes(4).toString('hex')}:`,
    TOKEN_ENCRYPTION_KEY,
    DISCORD_BOT_TOKEN: DEMO_SEED.application.bot_token,
    DISCORD_CLIENT_ID: DEMO_SEED.application.id,
    DISCORD_CLIENT_SECRET: DEMO_SEED.application.secret,
    DISCORD_API_URL: emulator.apiUrl,
    ROOT_USERS: OWNER,
    MAX_API_TOKENS_PER_USER: '1000',
    LOG_LEVEL: 'warn',
  };
  const logs = mkdtempSync(join(tmpdir(), `bms-faults-${fault.name}-`));
  const log = (n: number): string => join(logs, `instance-${n}.log`);
  const instances: ServiceProcess[] = [await startServiceProcess(env, log(0))];
  instances.push(await startServiceProcess(env, log(1)));
  const fleet = new Fleet(instances.map((instance) => instance.baseUrl));
  const work: Workload = {
    ops: [],
    acked: new Map(),
    unanswered: new Map(),
    tokenNames: [],
    shardAcked: new Map(),
    staleReads: [],
    lateReads: 0,
    lateMaxMs: 0,
    followerIssues: [],
    followerIds: [],
    reconnects: 0,
  };
  try {
    const { login, apiToken, entries } = await prepare(fleet, emulator);
    let writing = true;
    let following = true;
    const isWriting = (): boolean => writing;
    const isFollowing = (): boolean => following;
    const writers = [
      ...[0, 1, 0, 1].map((i) => editor(fleet, i, login, entries, work, isWriting)),
      ...[0, 1].map((i) => creator(fleet, i, login, apiToken, work, isWriting)),
    ];
    const watchers = [
      ...[0, 1].map((i) => poller(fleet, i, work, isFollowing)),
      follower(fleet, login, work, isFollowing),
    ];
    await sleep(options.beforeS * 1000);
    const faultStart = Date.now();
    console.log(`  ${fault.name}: striking`);
    await strike(fault, options, {
      fleet,
      instances,
      env,
      log,
      pgProxy,
      redisProxy,
      postgres,
      redis,
    });
    const faultEnd = Date.now();
    console.log(`  ${fault.name}: over after ${((faultEnd - faultStart) / 1000).toFixed(1)} s`);
    await sleep(options.afterS * 1000);
    writing = false;
    await Promise.all(writers);
    // The follower catches up with the last change before it stops.
    const newest = await newestRevision(fleet, login);
    for (let i = 0; i < 150 && (work.followerIds.at(-1) ?? 0) < newest; i++) await sleep(100);
    following = false;
    await Promise.all(watchers);
    const anomalies = await verify(fleet, login, work);
    const fiveHundreds = work.ops.filter((op) => op.status >= 500 && op.kind !== 'ready');
    for (const op of fiveHundreds) {
      const body = op.body as { message?: string } | undefined;
      // The documented outage answers: what is down, or a change the database did not confirm.
      const outage =
        op.retryAfter !== null &&
        (/unavailable.*try again later$/.test(body?.message ?? '') ||
          body?.message === UNCONFIRMED_COMMIT_MESSAGE);
      const databaseFault = fault.kind.startsWith('postgres');
      if (!outage || !databaseFault || op.start < faultStart - 1_000) {
        anomalies.push(
          `${op.kind} on instance ${op.instance}: ${op.status} ${body?.message ?? ''}`,
        );
      }
    }
    return {
      fault: fault.name,
      lateReads: work.lateReads,
      lateMaxMs: work.lateMaxMs,
      ops: work.ops,
      anomalies: dedupe(anomalies),
      fiveHundreds: fiveHundreds.length,
      normalAfterMs: timeToNormal(work.ops, faultEnd),
      faultMs: faultEnd - faultStart,
      reconnects: work.reconnects,
      events: work.followerIds.length,
    };
  } finally {
    for (const instance of instances) await stopServiceProcess(instance.process);
    await pgProxy.close();
    await redisProxy.close();
    await adminQuery(postgres.url, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(
      () => undefined,
    );
    console.log(`  the instances' logs: ${logs}`);
  }
}

interface Stage {
  fleet: Fleet;
  instances: ServiceProcess[];
  env: Record<string, string>;
  log: (n: number) => string;
  pgProxy: TcpProxy;
  redisProxy: TcpProxy;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
}

async function strike(fault: Fault, options: Options, stage: Stage): Promise<void> {
  switch (fault.kind) {
    case 'kill-instance': {
      const victim = stage.instances[1];
      const exited = new Promise((resolve) => victim.process.once('exit', resolve));
      victim.process.kill('SIGKILL');
      await exited;
      // A supervisor starts it again; the balancer sends to it once it is healthy.
      const restarted = await startServiceProcess(stage.env, stage.log(2));
      stage.instances[1] = restarted;
      stage.fleet.urls[1] = restarted.baseUrl;
      return;
    }
    case 'postgres-stop':
      stage.postgres.stopImmediately();
      await sleep(options.stopS * 1000);
      await stage.postgres.startServer();
      return;
    case 'postgres-stall':
      stage.pgProxy.stall();
      await sleep((fault.stallS ?? 15) * 1000);
      stage.pgProxy.resume();
      return;
    case 'redis-restart':
      await stage.redis.kill();
      await sleep(options.redisDownS * 1000);
      await stage.redis.restart();
      return;
    case 'redis-cuts':
      for (let i = 0; i < options.cuts; i++) {
        stage.redisProxy.cut();
        await sleep(200);
        stage.redisProxy.restore();
        await sleep(800);
      }
      return;
  }
}

/** Logs the owner in, makes the API token its shard reports use, and the entries editors share. */
async function prepare(
  fleet: Fleet,
  emulator: PlatformEmulator,
): Promise<{ login: string; apiToken: string; entries: string[] }> {
  const code = emulator.issueCode({ userId: OWNER, redirectUri: DEFAULT_REDIRECT_URI });
  const login = await fleet.call(0, 'token', 'POST', '/oauth2', null, {
    code,
    redirect_uri: DEFAULT_REDIRECT_URI,
  });
  const loginToken = expectOk(login, 'the login').token as string;
  const api = await fleet.call(0, 'token', 'POST', '/sessions', loginToken, {
    name: 'shard reports',
    type: 'api',
    expiry: 86_400,
  });
  const apiToken = expectOk(api, 'the API token').token as string;
  const entries: string[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const created = await fleet.call(0, 'update', 'POST', `/guilds/${GUILD}/settings`, loginToken, {
      setting: 'auditlog_sinks',
      operation: 'Create',
      fields: { channel: SINK_CHANNEL, events: ['lockdown'], enabled: true },
    });
    entries.push((expectOk(created, 'an entry').data as Sink).id);
  }
  return { login: loginToken, apiToken, entries };
}

async function newestRevision(fleet: Fleet, login: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const page = await fleet.call(
      0,
      'view',
      'GET',
      `/guilds/${GUILD}/settings/revisions?limit=1`,
      login,
    );
    if (page.outcome === 'ok') {
      return (page.body as { revisions: { revision: number }[] }).revisions[0]?.revision ?? 0;
    }
    await sleep(200);
  }
  return 0;
}

function expectOk(op: Op, what: string): Record<string, unknown> {
  if (op.outcome !== 'ok') {
    throw new Error(`${what} failed before the fault: ${op.status} ${JSON.stringify(op.body)}`);
  }
  return op.body as Record<string, unknown>;
}

/** After the run: what the database holds against what was acknowledged. */
async function verify(fleet: Fleet, login: string, work: Workload): Promise<string[]> {
  const anomalies = [...work.staleReads, ...work.followerIssues];
  // Everything settles: both instances ready.
  for (const instance of [0, 1]) {
    for (let i = 0; i < 100; i++) {
      const ready = await fleet.call(instance, 'ready', 'GET', '/readyz', null);
      if (ready.status === 200) break;
      await sleep(200);
    }
  }
  // Revisions: gapless, and per entry each acknowledged version exactly once.
  const revisions: {
    revision: number;
    key: { id?: string } | null;
    after: { version?: number } | null;
  }[] = [];
  let cursor: string | null = null;
  do {
    const page: Op = await fleet.call(
      0,
      'view',
      'GET',
      `/guilds/${GUILD}/settings/revisions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      login,
    );
    if (page.outcome !== 'ok') {
      anomalies.push(`the revisions could not be read: ${page.status}`);
      break;
    }
    const body = page.body as { revisions: typeof revisions; next_cursor: string | null };
    revisions.push(...body.revisions);
    cursor = body.next_cursor;
  } while (cursor);
  const numbers = revisions.map((r) => r.revision).sort((a, b) => a - b);
  for (let i = 1; i < numbers.length; i++) {
    if (numbers[i] !== numbers[i - 1] + 1) {
      anomalies.push(`revision gap: ${numbers[i - 1]} then ${numbers[i]}`);
    }
  }
  for (const [entry, versions] of work.acked) {
    const stored = revisions
      .filter((r) => r.key?.id === entry && r.after?.version !== undefined)
      .map((r) => r.after?.version as number);
    for (const version of versions.keys()) {
      const count = stored.filter((v) => v === version).length;
      if (count !== 1)
        anomalies.push(`entry ${entry}: acknowledged version ${version} stored ${count} times`);
    }
    const extra = new Set(stored.filter((v) => v > 1 && !versions.has(v))).size;
    if (extra > (work.unanswered.get(entry) ?? 0)) {
      anomalies.push(`entry ${entry}: ${extra} updates applied that were refused`);
    }
    if (new Set(stored).size !== stored.length)
      anomalies.push(`entry ${entry}: a version stored twice`);
  }
  // The follower saw every revision after its first, once.
  const newest = numbers.at(-1) ?? 0;
  const seen = new Set(work.followerIds);
  const first = work.followerIds[0];
  if (first !== undefined) {
    for (let r = first; r <= newest; r++) {
      if (!seen.has(r)) {
        anomalies.push(`the follower never received revision ${r}`);
        break;
      }
    }
  }
  // Tokens: every acknowledged one present, none twice, none refused present.
  const sessions = await fleet.call(0, 'view', 'GET', '/sessions', login);
  if (sessions.outcome === 'ok') {
    const names = (sessions.body as { sessions: { name: string }[] }).sessions.map((s) => s.name);
    for (const token of work.tokenNames) {
      const count = names.filter((name) => name === token.name).length;
      if (token.outcome === 'ok' && count !== 1)
        anomalies.push(`token ${token.name} stored ${count} times`);
      if (token.outcome === 'refused' && count !== 0)
        anomalies.push(`refused token ${token.name} stored`);
      if (token.outcome === 'none' && count > 1)
        anomalies.push(`token ${token.name} stored ${count} times`);
    }
  } else {
    anomalies.push(`the sessions could not be listed: ${sessions.status}`);
  }
  // Shard reports: the last acknowledged one (or a later one) is what the stats say.
  const stats = await fleet.call(0, 'view', 'GET', '/bot-stats', null);
  const shards =
    (stats.body as { shard_conns?: Record<string, { guilds: number }> }).shard_conns ?? {};
  for (const [shard, n] of work.shardAcked) {
    const guilds = shards[String(shard)]?.guilds ?? -1;
    if (guilds < n) anomalies.push(`shard ${shard}: report ${n} acknowledged, ${guilds} stored`);
  }
  return anomalies;
}

/**
 * From the fault's end until every operation since was answered well on both instances: the last
 * failed operation after the fault ended, or its end when none failed.
 */
function timeToNormal(ops: Op[], faultEnd: number): number | null {
  const failedAfter = ops.filter(
    (op) =>
      op.end >= faultEnd &&
      (op.outcome === 'none' ||
        op.status >= 500 ||
        (op.kind === 'ready' && op.status !== 200) ||
        (op.kind === 'ready' && (op.body as { status?: string } | undefined)?.status !== 'ok')),
  );
  if (failedAfter.length === 0) return 0;
  const last = Math.max(...failedAfter.map((op) => op.end));
  const okLater = ops.some((op) => op.start > last && op.outcome === 'ok');
  return okLater ? last - faultEnd : null;
}

function dedupe(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  return [...counts].map(([line, n]) => (n > 1 ? `${line} (×${n})` : line));
}

// --- Reporting ------------------------------------------------------------------------------------

function table(reports: FaultReport[]): string {
  const head =
    '| fault | duration | operations | ok | refused | no answer | 5xx | slowest answer | anomalies | events (reconnects) | time to normal |\n' +
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |';
  const rows = reports.map((r) => {
    const ops = r.ops.filter((op) => op.kind !== 'ready');
    const count = (o: Outcome): number => ops.filter((op) => op.outcome === o).length;
    const normal =
      r.normalAfterMs === null ? 'not reached' : `${(r.normalAfterMs / 1000).toFixed(1)} s`;
    const answered = ops.filter((op) => op.outcome !== 'none').map((op) => op.end - op.start);
    const slowest = `${(Math.max(0, ...answered) / 1000).toFixed(1)} s`;
    return `| ${r.fault} | ${(r.faultMs / 1000).toFixed(1)} s | ${ops.length} | ${count('ok')} | ${count('refused')} | ${count('none')} | ${r.fiveHundreds} | ${slowest} | ${r.anomalies.length} | ${r.events} (${r.reconnects}) | ${normal} |`;
  });
  return [head, ...rows].join('\n');
}

function details(report: FaultReport): string {
  const byKind = new Map<string, Map<string, number>>();
  for (const op of report.ops) {
    const key =
      op.outcome === 'ok' ? 'ok' : op.outcome === 'none' ? 'no answer' : String(op.status);
    const kind = byKind.get(op.kind) ?? new Map<string, number>();
    kind.set(key, (kind.get(key) ?? 0) + 1);
    byKind.set(op.kind, kind);
  }
  const lines = [...byKind].map(
    ([kind, outcomes]) =>
      `    ${kind}: ${[...outcomes].map(([outcome, n]) => `${outcome} ${n}`).join(', ')}`,
  );
  const anomalies = report.anomalies.map((a) => `    anomaly: ${a}`);
  const late = `    reads that missed an acknowledged update, within ${STALE_BOUND_MS / 1000} s: ${report.lateReads}${report.lateReads > 0 ? ` (the oldest ${report.lateMaxMs} ms after the update's answer)` : ''}`;
  return [`  ${report.fault}`, ...lines, late, ...anomalies].join('\n');
}

// --- Main -----------------------------------------------------------------------------------------

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const values = readArguments(
    args,
    ['faults', 'before-s', 'after-s', 'stop-s', 'stalls', 'redis-down-s', 'cuts', 'write'],
    USAGE,
  );
  const stalls = (values.get('stalls') ?? env.FAULTS_STALLS ?? '15,25')
    .split(',')
    .map((value) => integer('--stalls', value, 1));
  const faults = (values.get('faults') ?? FAULTS.join(',')).split(',').flatMap((name): Fault[] => {
    if (!(FAULTS as readonly string[]).includes(name)) {
      throw new Error(`unknown fault "${name}"\n\n${USAGE}`);
    }
    const kind = name as FaultKind;
    return kind === 'postgres-stall'
      ? stalls.map((stallS) => ({ kind, name: `postgres-stall-${stallS}s`, stallS }))
      : [{ kind, name }];
  });
  return {
    faults,
    beforeS: integer('--before-s', values.get('before-s') ?? env.FAULTS_BEFORE_S ?? '5', 1),
    afterS: integer('--after-s', values.get('after-s') ?? env.FAULTS_AFTER_S ?? '8', 1),
    stopS: integer('--stop-s', values.get('stop-s') ?? env.FAULTS_STOP_S ?? '10', 1),
    redisDownS: integer('--redis-down-s', values.get('redis-down-s') ?? '2', 0),
    cuts: integer('--cuts', values.get('cuts') ?? '10', 1),
    write: values.get('write') === 'true',
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const missing = [privatePostgresUnavailable(), privateRedisUnavailable()].filter(Boolean);
  if (missing.length > 0) {
    console.error(`bench:faults needs servers of its own: ${missing.join('; ')}`);
    process.exit(2);
  }
  console.log('starting a private PostgreSQL cluster and Redis…');
  const postgres = await PrivatePostgres.start();
  const redis = await PrivateRedis.start();
  const emulator = await PlatformEmulator.start(DEMO_SEED);
  // Interrupted: the servers of its own go with it (the cluster runs detached, as pg_ctl starts it).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      postgres.destroy();
      void redis.stop().finally(() => process.exit(130));
    });
  }
  const reports: FaultReport[] = [];
  try {
    for (const fault of options.faults) {
      console.log(`fault ${fault.name}`);
      reports.push(await runFault(fault, options, { postgres, redis, emulator }));
    }
  } finally {
    await emulator.close();
    await redis.stop();
    postgres.destroy();
  }
  const text = [
    `bench:faults, ${new Date().toISOString()}: ${options.beforeS} s of workload before each fault, ${options.afterS} s after it ends; PostgreSQL stopped ${options.stopS} s; Redis down ${options.redisDownS} s; ${options.cuts} Redis cuts`,
    '',
    table(reports),
    '',
    ...reports.map(details),
  ].join('\n');
  console.log(`\n${text}`);
  if (options.write) writeFileSync(join(ROOT, 'bench', 'faults-results.md'), `${text}\n`);
  const anomalies = reports.reduce((sum, r) => sum + r.anomalies.length, 0);
  process.exit(anomalies > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
