import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request, { type Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { faultsOf } from 'test/support/emulator-faults';
import { openRawStream, type RawStream } from 'test/support/event-stream';
import { eventually } from 'test/support/eventually';
import { guildCreate, type Unnumbered } from 'test/support/guild-state';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { unusedPort } from 'test/support/ports';
import { buildIfStale, startService } from 'test/support/service-process';

/**
 * The operator's view against the real thing (docs/operations.md, "The dashboard" and "Alerts"):
 * the built service as a process (`dist/src/main.js`, on its embedded default), the emulator as
 * the platform and this test as its bot, its metrics listener scraped every second by a real
 * `prometheus` that evaluates alerts.yml every second. After some work that touches every panel,
 * every query of the dashboard has data and every alert rule evaluates; then the bot stops
 * reporting and BmsMembershipFeedNotLive fires.
 *
 * Prometheus evaluates a copy of alerts.yml whose `for:` durations are all 2 s (the real ones are
 * minutes), and the service's feed is stale after 10 s (BOT_FEED_STALE_AFTER, its minimum).
 */
const ROOT = resolve(__dirname, '..', '..');
const DASHBOARD_FILE = join(ROOT, 'docker', 'grafana', 'dashboards', 'bot-management-service.json');
const ALERTS_FILE = join(ROOT, 'docker', 'prometheus', 'alerts.yml');
/** The job name of docker/prometheus/prometheus.yml, which the alerts and the dashboard use. */
const JOB = 'bot-management-service';
/** The copy's `for:`: long enough to be pending first, short enough not to wait minutes. */
const SHORT_FOR = '2s';
const BOT_GUILDS = [DEMO_IDS.community, DEMO_IDS.botLab];

// Boots the service and Prometheus, and waits on Prometheus' one-second cycles: generous bounds for
// a busy 2-core machine (each wait ends as soon as its condition holds).
jest.setTimeout(180_000);
beforeAll(buildIfStale, 180_000);

const missing = whyNoPrometheus();
if (missing) console.warn(`Skipping the tests against Prometheus: ${missing}`);

(missing ? describe.skip : describe)('the dashboard and the alerts, against Prometheus', () => {
  const platform = useEmulator();
  let service: Service | undefined;
  let prometheus: Prometheus;
  let bot: Bot;
  let stream: RawStream | undefined;
  let scratch: string | undefined;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'bms-prometheus-'));
    service = await startServiceProcess({
      DATA_DIR: join(scratch, 'service'),
      ...liveModeEnv(platform()),
      ROOT_USERS: DEMO_IDS.alice,
      METRICS_PORT: '0',
      BOT_FEED_STALE_AFTER: '10',
    });
    prometheus = await startPrometheus(scratch, service.metricsPort);
    bot = await Bot.signIn(service.base, platform());
    // Prometheus sees the service first, so that the work below lands in its samples.
    await eventually(
      () => prometheus.targets(),
      (targets) => targets.some((one) => one.health === 'up'),
      60_000,
    );
    stream = await doSomeWork(service.port, bot, platform());
  }, 120_000);

  afterAll(async () => {
    stream?.close();
    await bot?.stop();
    await prometheus?.stop();
    await service?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('has data for every query of the dashboard once the service has done some work', async () => {
    const targets = await eventually(
      () => prometheus.targets(),
      (scraped) => scraped.length === 1 && scraped[0].health === 'up',
      60_000,
    );
    expect(targets).toEqual([expect.objectContaining({ health: 'up' })]);

    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
    const values = variableValues(prometheus.instance);
    const queries = dashboard.panels
      .flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]))
      .flatMap((panel) =>
        (panel.targets ?? []).map((target) => ({
          panel: panel.title,
          expr: substitute(target.expr, values),
        })),
      );
    expect(queries.length).toBeGreaterThan(20);
    expect(queries.filter((query) => query.expr.includes('$'))).toEqual([]);
    // Each has data within the bound: the scrapes after the work above, then two samples in a
    // rate's window. Each round asks again only the queries that had none.
    let waiting: { panel: string; expr: string; error?: string }[] = queries;
    const empty = await eventually(
      async () => {
        const answers = await Promise.all(waiting.map((query) => prometheus.query(query.expr)));
        waiting = waiting
          .map((query, index) => ({ ...query, error: answers[index].error }))
          .filter((_, index) => !hasData(answers[index]));
        return waiting;
      },
      (left) => left.length === 0,
      60_000,
    );
    expect(empty).toEqual([]);

    // The variables' own queries (Grafana's label_values) have values: the job and instance.
    for (const variable of dashboard.templating.list.filter((one) => one.type === 'query')) {
      const [, selector, label] =
        /^label_values\((.+),\s*(\w+)\)$/.exec(substitute(variable.query ?? '', values)) ?? [];
      expect({
        variable: variable.name,
        values: await prometheus.labelValues(label, selector),
      }).toEqual({
        variable: variable.name,
        values: expect.arrayContaining([expect.any(String)]),
      });
    }
  });

  it('evaluates every alert rule without error, each with its severity, summary and runbook', async () => {
    const alertNames = [...readFileSync(ALERTS_FILE, 'utf8').matchAll(/^\s*- alert: (\w+)$/gm)].map(
      ([, name]) => name,
    );
    const rules = await eventually(
      () => prometheus.rules(),
      (loaded) =>
        loaded.length === alertNames.length &&
        loaded.every((rule) => !rule.lastEvaluation.startsWith('0001-')),
      60_000,
    );
    expect(rules.map((rule) => rule.name)).toEqual(alertNames);
    expect(rules.filter((rule) => rule.health !== 'ok' || rule.lastError)).toEqual([]);
    for (const rule of rules) {
      expect({ rule: rule.name, answer: (await prometheus.query(rule.query)).status }).toEqual({
        rule: rule.name,
        answer: 'success',
      });
      expect(rule).toMatchObject({
        duration: 2,
        labels: { severity: expect.stringMatching(/^(warning|critical)$/) },
        annotations: {
          summary: expect.any(String),
          description: expect.any(String),
          runbook: `docs/operations.md#${rule.name.toLowerCase()}`,
        },
      });
    }
  });

  it('fires BmsMembershipFeedNotLive once the bot stops reporting', async () => {
    // Live while the bot reports: the alert is not firing.
    const live = await eventually(
      async () => ({
        live: await prometheus.value('bms_membership_feed_live'),
        alert: await prometheus.alert('BmsMembershipFeedNotLive'),
      }),
      (now) => now.live === 1 && now.alert === undefined,
      60_000,
    );
    expect(live).toEqual({ live: 1, alert: undefined });

    await bot.stop();
    // Stale after BOT_FEED_STALE_AFTER (10 s), then firing after the copy's 2 s.
    const firing = await eventually(
      () => prometheus.alert('BmsMembershipFeedNotLive'),
      (alert) => alert?.state === 'firing',
      90_000,
    );
    expect(firing).toMatchObject({
      state: 'firing',
      labels: {
        alertname: 'BmsMembershipFeedNotLive',
        severity: 'warning',
        job: JOB,
        instance: prometheus.instance,
      },
      annotations: { runbook: 'docs/operations.md#bmsmembershipfeednotlive' },
      value: '0e+00',
    });
  });
});

/** Enough work to put a value in every panel: the requests a dashboard, a bot and users make. */
async function doSomeWork(port: number, bot: Bot, emulator: PlatformEmulator): Promise<RawStream> {
  const now = (offsetMs = 0): string => new Date(Date.now() + offsetMs).toISOString();
  // The bot's membership snapshot, then heartbeats as a bot sends them, until `bot.stop()`.
  await bot
    .put('/internal/shards/0/guilds', {
      shard_count: 1,
      snapshot_at: now(),
      total: BOT_GUILDS.length,
      guild_ids: BOT_GUILDS,
    })
    .expect(200);
  bot.startHeartbeat();
  // A join applied, and a leave far older than what is held: ignored.
  const guild = '1100000000000000999';
  await bot
    .post('/internal/shards/0/guild-events', {
      events: [
        { type: 'join', guild_id: guild, at: now() },
        { type: 'leave', guild_id: guild, at: now(-30 * 86_400_000) },
      ],
    })
    .expect(200, { applied: 1, ignored: 1 });
  // A report the feed refuses (400).
  await bot
    .put('/internal/shards/0/guilds', {
      shard_count: 0,
      snapshot_at: now(),
      total: 0,
      guild_ids: [],
    })
    .expect(400);
  // The guild state of one guild, a drift found by the hash, and healed by a full state.
  await bot.guildState([guildCreate(emulator, DEMO_IDS.botLab)]).expect(200);
  const drifted = await bot
    .guildState([
      {
        type: 'guild_update',
        guild_id: DEMO_IDS.botLab,
        guild: { name: 'drift', icon: null, owner_id: DEMO_IDS.alice },
        hash: '0'.repeat(64),
      },
    ])
    .expect(200);
  expect(drifted.body.resync).toEqual([DEMO_IDS.botLab]);
  await bot.guildState([guildCreate(emulator, DEMO_IDS.botLab)]).expect(200);

  // A user opens a guild whose state the bot has not reported (platform calls), twice (the second
  // from the caches), and reads its settings; a call without a token is refused (401).
  const user = (path: string): Test =>
    request(bot.base).get(path).set('Authorization', `Bearer ${bot.login}`);
  await user(`/users/@me/guilds/${DEMO_IDS.community}`).expect(200);
  await user(`/users/@me/guilds/${DEMO_IDS.community}`).expect(200);
  await user(`/guilds/${DEMO_IDS.community}/settings`).expect(200);
  await user(`/guilds/${DEMO_IDS.community}/settings`).expect(200);
  await request(bot.base).get(`/guilds/${DEMO_IDS.community}/settings`).expect(401);

  // A login the platform answers with a long 429: refused (a 5xx), the call rate limited.
  faultsOf(emulator).inject('GET /users/@me', { kind: 'rate_limit', retryAfter: 60 });
  const code = emulator.issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
  const refused = await request(bot.base)
    .post('/oauth2')
    .send({ code, redirect_uri: DEMO_REDIRECT });
  expect(refused.status).toBeGreaterThanOrEqual(500);
  faultsOf(emulator).clear();

  // A dashboard watching the guild's settings changes: an event stream, left open.
  return openRawStream(port, `/guilds/${DEMO_IDS.community}/events`, {
    Authorization: `Bearer ${bot.login}`,
  });
}

/**
 * The bot's processes as the service sees them: a root user's API token for the internal feed
 * routes (Alice's, with her login session as a dashboard user), one guild-state stream, and a
 * heartbeat every 2 s (an empty batch of joins and leaves) that keeps the membership feed live
 * until `stop()`.
 */
class Bot {
  private heartbeat: NodeJS.Timeout | null = null;
  private sending: Promise<unknown> = Promise.resolve();
  private readonly stream = { id: randomUUID(), started_at: new Date().toISOString() };
  private seq = 0;

  private constructor(
    readonly base: string,
    readonly login: string,
    readonly token: string,
  ) {}

  /** Alice logs in (a code from the emulator, as its consent screen would give) and makes the token. */
  static async signIn(base: string, emulator: PlatformEmulator): Promise<Bot> {
    const code = emulator.issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
    const login = await request(base)
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    const api = await request(base)
      .post('/sessions')
      .set('Authorization', `Bearer ${login.body.token}`)
      .send({ name: 'bot', type: 'api', expiry: 3600 })
      .expect(201);
    return new Bot(base, login.body.token as string, api.body.token as string);
  }

  put(path: string, body: object): Test {
    return request(this.base).put(path).set('Authorization', `Bearer ${this.token}`).send(body);
  }

  post(path: string, body: object): Test {
    return request(this.base).post(path).set('Authorization', `Bearer ${this.token}`).send(body);
  }

  /** Reports to the guild-state feed (shard 0), numbered in the stream's order. */
  guildState(reports: Unnumbered[]): Test {
    const numbered = reports.map((report) => ({
      at: new Date().toISOString(),
      ...report,
      seq: ++this.seq,
    }));
    return this.post('/internal/shards/0/guild-state', { stream: this.stream, reports: numbered });
  }

  startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      // One at a time: a heartbeat waits for the one before.
      this.sending = this.sending
        .then(() => this.post('/internal/shards/0/guild-events', { events: [] }).expect(200))
        .catch(() => undefined);
    }, 2_000);
  }

  /** No more heartbeats; resolves once the last one sent has been answered. */
  async stop(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.sending;
  }
}

interface Service {
  /** The API's port. */
  port: number;
  base: string;
  /** The port of its metrics listener (METRICS_PORT=0: any free one, named in its log). */
  metricsPort: number;
  stop(): Promise<void>;
}

/** The built service on free loopback ports, once it serves; `stop()` sends SIGTERM and waits. */
async function startServiceProcess(env: Record<string, string>): Promise<Service> {
  const service = startService({ PORT: '0', HOST: '127.0.0.1', ...env });
  const stop = async (): Promise<void> => {
    service.child.kill('SIGTERM');
    const timer = setTimeout(() => service.child.kill('SIGKILL'), 30_000);
    await service.exited;
    clearTimeout(timer);
  };
  try {
    const port = await service.port;
    // Logged as the application boots, before the line that names the API's port.
    const metrics = /"port":(\d+)[^\n]*"msg":"Metrics served at \/metrics"/.exec(service.output());
    if (!metrics) throw new Error(`The service names no metrics port:\n${service.output()}`);
    return { port, base: `http://127.0.0.1:${port}`, metricsPort: Number(metrics[1]), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface Dashboard {
  panels: {
    type: string;
    title: string;
    targets?: { expr: string }[];
    panels?: Dashboard['panels'];
  }[];
  templating: { list: { name: string; type: string; query?: string }[] };
}

/**
 * What Grafana puts in place of the variables: the rate interval at least four scrapes long (and
 * long enough to hold this test's work), the job of the scrape config, this instance (escaped,
 * as Grafana escapes a regex variable's value), every route.
 */
function variableValues(instance: string): Record<string, string> {
  return {
    __rate_interval: '1m',
    __interval: '15s',
    __range: '5m',
    job: JOB,
    instance: instance.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&'),
    route: '.*',
  };
}

function hasData(answer: QueryAnswer): boolean {
  return answer.status === 'success' && answer.data.result.length > 0;
}

function substitute(expr: string, values: Record<string, string>): string {
  return expr.replace(/\$\{?(\w+)\}?/g, (variable, name: string) => values[name] ?? variable);
}

/** Why the `prometheus` binary (Debian's package: /usr/bin/prometheus) cannot run, if it cannot. */
function whyNoPrometheus(): string | null {
  const run = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (!run.error && run.status === 0) return null;
  return `the prometheus binary cannot be run (${run.error?.message ?? `exit ${run.status}`}): apt-get install prometheus (.ci/run installs it)`;
}

interface QueryAnswer {
  status: string;
  error?: string;
  data: {
    resultType: string;
    result: { metric: Record<string, string>; value: [number, string] }[];
  };
}

interface Rule {
  name: string;
  query: string;
  duration: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  health: string;
  lastError?: string;
  lastEvaluation: string;
}

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
  activeAt: string;
  value: string;
}

/** A `prometheus` process of the test's, and its HTTP API. */
interface Prometheus {
  /** The scraped instance's label: the service's metrics listener. */
  readonly instance: string;
  targets(): Promise<{ health: string; lastError: string }[]>;
  query(expr: string): Promise<QueryAnswer>;
  /** The value of a query with one result, or undefined. */
  value(expr: string): Promise<number | undefined>;
  labelValues(label: string, selector: string): Promise<string[]>;
  rules(): Promise<Rule[]>;
  /** The alert of that name (pending or firing), if any. */
  alert(name: string): Promise<Alert | undefined>;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus on a free loopback port, scraping the service's metrics listener every second
 * and evaluating a copy of alerts.yml every second (its `for:` shortened to SHORT_FOR). Resolves
 * once it is ready; a port taken in between is tried again on another.
 */
async function startPrometheus(scratch: string, metricsPort: number): Promise<Prometheus> {
  const instance = `127.0.0.1:${metricsPort}`;
  writeFileSync(
    join(scratch, 'alerts.yml'),
    readFileSync(ALERTS_FILE, 'utf8').replace(/^(\s+)for: \S+$/gm, `$1for: ${SHORT_FOR}`),
  );
  writeFileSync(
    join(scratch, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      '  - alerts.yml',
      'scrape_configs:',
      `  - job_name: ${JOB}`,
      '    static_configs:',
      `      - targets: ['${instance}']`,
      '',
    ].join('\n'),
  );
  for (let attempt = 1; ; attempt++) {
    const port = await unusedPort();
    const child = spawn(
      'prometheus',
      [
        `--config.file=${join(scratch, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(scratch, `data-${attempt}`)}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((done) => child.on('close', () => done()));
    let gone = false;
    void exited.then(() => (gone = true));
    const ready = await eventually(
      async () => (gone ? 'exited' : (await isReady(port)) ? 'ready' : 'starting'),
      (state) => state !== 'starting',
      60_000,
    );
    if (ready === 'ready') return prometheusApi(child, exited, port, instance);
    child.kill('SIGKILL');
    await exited;
    if (attempt < 3 && /address already in use/.test(output)) continue;
    throw new Error(`Prometheus did not start (${ready}):\n${output}`);
  }
}

async function isReady(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/-/ready`)).status === 200;
  } catch {
    return false;
  }
}

function prometheusApi(
  child: ChildProcess,
  exited: Promise<void>,
  port: number,
  instance: string,
): Prometheus {
  const api = async <T>(path: string): Promise<T> => {
    const answer = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`);
    return (await answer.json()) as T;
  };
  const query = (expr: string): Promise<QueryAnswer> =>
    api<QueryAnswer>(`query?query=${encodeURIComponent(expr)}`);
  return {
    instance,
    targets: async () =>
      (await api<{ data: { activeTargets: { health: string; lastError: string }[] } }>('targets'))
        .data.activeTargets,
    query,
    value: async (expr) => {
      const answer = await query(expr);
      return answer.data?.result.length === 1 ? Number(answer.data.result[0].value[1]) : undefined;
    },
    labelValues: async (label, selector) =>
      (
        await api<{ data: string[] }>(
          `label/${label}/values?match[]=${encodeURIComponent(selector)}`,
        )
      ).data,
    rules: async () =>
      (
        await api<{ data: { groups: { rules: Rule[] }[] } }>('rules?type=alert')
      ).data.groups.flatMap((group) => group.rules),
    alert: async (name) =>
      (await api<{ data: { alerts: Alert[] } }>('alerts')).data.alerts.find(
        (alert) => alert.labels.alertname === name,
      ),
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
