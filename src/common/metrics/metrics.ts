import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** How a call to the chat platform ended, as the platform metrics count it. */
export type PlatformOutcome =
  | 'ok'
  | 'client_error'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'refused_by_budget'
  | 'refused_by_queue'
  /** Refused at once while the platform is known down (src/platform/platform-breaker.ts). */
  | 'refused_by_breaker';

/** The platform breaker's state, as its gauge reports it. */
const BREAKER_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

/** How a login (`POST /oauth2`) ended, as the login metric counts it. */
export type LoginOutcome =
  'ok' | 'refused' | 'restricted' | 'banned' | 'rate_limited' | 'platform_error' | 'error';

/** Request durations, in seconds: from a cached read (~1 ms) to the request timeout. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Platform calls take longer: a network round trip at least. */
const PLATFORM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** A turn in a shared bucket's queue: none at all, up to the queue's bound (2 s by default) and past it. */
const QUEUE_WAIT_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];

/**
 * The service's Prometheus metrics (prom-client), in one registry of its own. Every label takes a
 * bounded set of values: route templates (never a path with ids), methods, status codes, named
 * outcomes, cache names. `enabled` is false when METRICS_PORT is unset: nothing is recorded (each
 * recording method returns at once) and nothing is served.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly platformDuration: Histogram<'route' | 'outcome'>;
  private readonly cacheLookups: Counter<'cache' | 'result'>;
  private readonly queueWait: Histogram;
  private readonly logins: Counter<'outcome'>;
  private readonly feedEvents: Counter<'result'>;
  private readonly guildStateDrift: Counter<'event'>;
  private readonly breaker: Gauge<'path'>;
  /** One per route, method and status seen: bounded as the labels are. */
  private readonly httpChildren = new Map<string, Histogram.Internal<string>>();
  private readonly cacheChildren = new Map<string, Counter.Internal>();

  constructor(readonly enabled: boolean) {
    const registers = [this.registry];
    this.httpDuration = new Histogram({
      name: 'bms_http_request_duration_seconds',
      help: 'HTTP requests by route template, method and status: count and duration',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.platformDuration = new Histogram({
      name: 'bms_platform_request_duration_seconds',
      help: 'Calls to the chat platform by route template and outcome (429s, budget refusals included): count and duration',
      labelNames: ['route', 'outcome'],
      buckets: PLATFORM_BUCKETS,
      registers,
    });
    this.cacheLookups = new Counter({
      name: 'bms_cache_lookups_total',
      help: 'Lookups in the shared caches, by cache and result (hit or miss)',
      labelNames: ['cache', 'result'],
      registers,
    });
    this.queueWait = new Histogram({
      name: 'bms_platform_queue_wait_seconds',
      help: "How long calls waited for their turn in the shared platform buckets' queues (the bot token, the OAuth2 client)",
      buckets: QUEUE_WAIT_BUCKETS,
      registers,
    });
    this.logins = new Counter({
      name: 'bms_logins_total',
      help: 'Logins (POST /oauth2) by outcome: ok, refused (a bad or used code), restricted (a redirect URI or scope), banned, rate_limited, platform_error, error',
      labelNames: ['outcome'],
      registers,
    });
    this.feedEvents = new Counter({
      name: 'bms_membership_feed_events_total',
      help: 'Joins and leaves the bot reported to the membership feed: applied, or ignored (older than what is held)',
      labelNames: ['result'],
      registers,
    });
    this.guildStateDrift = new Counter({
      name: 'bms_guild_state_drift_total',
      help: "Guilds of the guild-state feed whose copy differed from the bot's (detected), and that a full state made whole again (healed)",
      labelNames: ['event'],
      registers,
    });
    this.breaker = new Gauge({
      name: 'bms_platform_breaker_state',
      help: "This instance's view of the chat platform: 0 up (calls go through), 1 one probe on the wire, 2 down (calls refused at once); path: platform, or proxy for the bot's calls through a REST proxy",
      labelNames: ['path'],
      registers,
    });
    if (enabled) collectDefaultMetrics({ register: this.registry });
  }

  /** One answered HTTP request; `route` is the route template, or `unmatched`. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    if (!this.enabled) return;
    // The labelled child is kept: prom-client would hash the label object on every request.
    const key = `${method} ${statusCode} ${route}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.httpDuration.labels({ method, route, status_code: String(statusCode) });
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** One call to the platform, counted once however many attempts it took. */
  platformCall(route: string, outcome: PlatformOutcome, seconds: number): void {
    if (!this.enabled) return;
    this.platformDuration.observe({ route, outcome }, seconds);
  }

  /** The platform breaker's state after an attempt (src/platform/platform-breaker.ts). */
  platformBreaker(path: 'platform' | 'proxy', state: keyof typeof BREAKER_VALUES): void {
    if (!this.enabled) return;
    this.breaker.set({ path }, BREAKER_VALUES[state]);
  }

  /** A call's wait for its turn in a shared bucket's queue (one that was let through). */
  platformQueueWait(seconds: number): void {
    if (!this.enabled) return;
    this.queueWait.observe(seconds);
  }

  login(outcome: LoginOutcome): void {
    if (!this.enabled) return;
    this.logins.inc({ outcome });
  }

  /** A batch of the membership feed's joins and leaves, once stored. */
  membershipFeedEvents(applied: number, ignored: number): void {
    if (!this.enabled) return;
    if (applied > 0) this.feedEvents.inc({ result: 'applied' }, applied);
    if (ignored > 0) this.feedEvents.inc({ result: 'ignored' }, ignored);
  }

  /** A batch of the guild-state feed's reports, once stored: guilds found drifted, and healed. */
  guildStateDrifts(detected: number, healed: number): void {
    if (!this.enabled) return;
    if (detected > 0) this.guildStateDrift.inc({ event: 'detected' }, detected);
    if (healed > 0) this.guildStateDrift.inc({ event: 'healed' }, healed);
  }

  cacheLookup(cache: string, hit: boolean): void {
    if (!this.enabled) return;
    const key = `${cache} ${hit}`;
    let child = this.cacheChildren.get(key);
    if (!child) {
      child = this.cacheLookups.labels({ cache, result: hit ? 'hit' : 'miss' });
      this.cacheChildren.set(key, child);
    }
    child.inc();
  }

  /** A gauge read when scraped: `read` gives its value then. */
  gauge(name: string, help: string, read: () => number): void {
    if (!this.enabled) return;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A gauge with one label, read when scraped: `read` gives the value of each label value. */
  labelledGauge(
    name: string,
    help: string,
    label: string,
    read: () => Readonly<Record<string, number>>,
  ): void {
    if (!this.enabled) return;
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        // Only what `read` gives now: a label value gone since (a shard no longer reporting) goes.
        this.reset();
        for (const [value, count] of Object.entries(read())) this.set({ [label]: value }, count);
      },
    });
  }
}
