import { createHash } from 'node:crypto';

/** A route's bucket: `limit` requests per window of `windowMs`, from the window's first request. */
export interface RouteLimit {
  limit: number;
  windowMs: number;
}

/** The platform's global limit: requests per second per identity (a token, or an address). */
export const DEFAULT_GLOBAL_LIMIT_PER_SECOND = 50;

/**
 * Per route template, modelled on what the platform announces in its headers (it publishes no
 * table and changes them at will): guild reads are cheap, the guild list of a token and the
 * command overwrite are scarce, the token endpoint is limited per address.
 */
export const DEFAULT_ROUTE_LIMITS: Readonly<Record<string, RouteLimit>> = {
  'POST /oauth2/token': { limit: 10, windowMs: 1_000 },
  'POST /oauth2/token/revoke': { limit: 10, windowMs: 1_000 },
  'GET /users/@me': { limit: 5, windowMs: 1_000 },
  'GET /users/@me/guilds': { limit: 1, windowMs: 1_000 },
  // The user's own member, by the user's token (guilds.members.read). Discord publishes no figure
  // and the stored docs, change log and issues give none (discord-domain.md §8); library users
  // call it strict ("an aggressive rate limit", reboxer/discord-oauth2#76). 5 per 5 s is the
  // informally reported figure, unverified: the strictest user route here, so a client that
  // keeps to it keeps to the platform. Per token and guild, the guild being the route's major
  // parameter as for every guild route (rate-limits.mdx).
  'GET /users/@me/guilds/:guild_id/member': { limit: 5, windowMs: 5_000 },
  'GET /guilds/:guild_id': { limit: 5, windowMs: 1_000 },
  'GET /guilds/:guild_id/channels': { limit: 5, windowMs: 1_000 },
  'GET /guilds/:guild_id/threads/active': { limit: 5, windowMs: 1_000 },
  'GET /guilds/:guild_id/members/:user_id': { limit: 10, windowMs: 1_000 },
  'GET /applications/:application_id/commands': { limit: 5, windowMs: 1_000 },
  'PUT /applications/:application_id/commands': { limit: 2, windowMs: 5_000 },
};

export interface EmulatorRateLimitOptions {
  /** Requests per second per identity; default 50. */
  globalPerSecond?: number;
  /** Per route template, over DEFAULT_ROUTE_LIMITS; `null` leaves a route to the global limit. */
  routes?: Readonly<Record<string, RouteLimit | null>>;
  /**
   * Routes whose 429 is a shared resource's (`X-RateLimit-Scope: shared`), which the platform does
   * not count as an invalid request.
   */
  sharedRoutes?: readonly string[];
  /** Windows and buckets kept at most (expired ones go first); default 100,000. */
  maxEntries?: number;
}

/** What the limits need to know of a request. */
export interface LimitedRequest {
  /** The route template, `GET /guilds/:guild_id`. */
  route: string;
  /** Whom the platform limits: a token, or the address of a request without one. */
  identity: string;
  /** The route's top-level resource (guild or application id); '' for none. */
  majorParameter: string;
}

export interface RateLimitBody {
  message: 'You are being rate limited.';
  retry_after: number;
  global: boolean;
  code: 0;
}

/** Headers for the answer; with `refused`, the 429's body (the route does not run). */
export type RateLimitVerdict =
  | { refused: false; headers: Record<string, string> }
  | { refused: true; headers: Record<string, string>; body: RateLimitBody };

/** A window that starts with its first request and ends at `resetAt`. */
interface Window {
  resetAt: number;
  used: number;
}

const GLOBAL_WINDOW_MS = 1_000;
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * The platform's rate limits, as the emulator enforces them: a global limit per identity, then a
 * bucket per route, major parameter and identity. The global limit holds in every second: a request
 * is refused when the identity's last `globalPerSecond` requests all came within the second before
 * it, so any second in which a client sent more than the limit shows as global 429s. Every request
 * counts against it, refused ones too. A bucket is a fixed window opened by its first request and
 * counts the requests it lets through. Memory: an identity's last requests (at most the limit) and
 * a bucket are dropped once they are a second old or the bucket has reset (swept once a second),
 * and past `maxEntries` the oldest go.
 */
export class EmulatorRateLimits {
  private readonly globalLimit: number;
  private readonly routes: Map<string, RouteLimit>;
  private readonly shared: ReadonlySet<string>;
  private readonly maxEntries: number;
  /** Per identity: when its last requests came (at most the global limit), oldest first. */
  private readonly recent = new Map<string, number[]>();
  private readonly buckets = new Map<string, Window>();
  private nextSweepAt = Number.NEGATIVE_INFINITY;

  constructor(
    options: EmulatorRateLimitOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.globalLimit = options.globalPerSecond ?? DEFAULT_GLOBAL_LIMIT_PER_SECOND;
    this.routes = new Map(Object.entries(DEFAULT_ROUTE_LIMITS));
    for (const [route, limit] of Object.entries(options.routes ?? {})) {
      if (limit) this.routes.set(route, limit);
      else this.routes.delete(route);
    }
    this.shared = new Set(options.sharedRoutes ?? []);
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /** Windows and buckets held now (for tests of the memory bound). */
  get size(): number {
    return this.recent.size + this.buckets.size;
  }

  /** Counts the request and says whether it passes, with the rate-limit headers of its answer. */
  admit(request: LimitedRequest): RateLimitVerdict {
    const now = this.now();
    this.sweep(now);
    const times = this.arrivals(request.identity, now);
    times.push(now);
    if (times.length > this.globalLimit) {
      times.shift();
      // The second before this request holds the limit already: room comes when the oldest of
      // them is a second old.
      return globalRefusal(times[0] + GLOBAL_WINDOW_MS - now);
    }

    const bucketId = bucketOf(request.route);
    const limit = this.routes.get(request.route);
    if (!limit) return { refused: false, headers: { 'X-RateLimit-Bucket': bucketId } };
    const key = `${request.identity}\n${bucketId}\n${request.majorParameter}`;
    const bucket = this.open(this.buckets, key, limit.windowMs, now);
    const refused = bucket.used >= limit.limit;
    if (!refused) bucket.used += 1;
    const resetAfterMs = bucket.resetAt - now;
    const headers: Record<string, string> = {
      'X-RateLimit-Bucket': bucketId,
      'X-RateLimit-Limit': String(limit.limit),
      'X-RateLimit-Remaining': String(limit.limit - bucket.used),
      'X-RateLimit-Reset': (bucket.resetAt / 1000).toFixed(3),
      'X-RateLimit-Reset-After': (resetAfterMs / 1000).toFixed(3),
    };
    if (!refused) return { refused: false, headers };
    return {
      refused: true,
      headers: {
        ...headers,
        'Retry-After': String(Math.ceil(resetAfterMs / 1000)),
        'X-RateLimit-Scope': this.shared.has(request.route) ? 'shared' : 'user',
      },
      body: rateLimitBody(resetAfterMs, false),
    };
  }

  /** The identity's requests of the last second, oldest first (a new list past `maxEntries`). */
  private arrivals(identity: string, now: number): number[] {
    let times = this.recent.get(identity);
    if (!times) {
      if (this.recent.size >= this.maxEntries) {
        const oldest = this.recent.keys().next();
        if (!oldest.done) this.recent.delete(oldest.value);
      }
      times = [];
      this.recent.set(identity, times);
    }
    while (times.length > 0 && times[0] <= now - GLOBAL_WINDOW_MS) times.shift();
    return times;
  }

  /** The window under `key`, a new one when there is none or it has reset. */
  private open(map: Map<string, Window>, key: string, windowMs: number, now: number): Window {
    const current = map.get(key);
    if (current && current.resetAt > now) return current;
    // Re-inserted, so the map's order stays oldest first for the bound below.
    map.delete(key);
    if (map.size >= this.maxEntries) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    const fresh = { resetAt: now + windowMs, used: 0 };
    map.set(key, fresh);
    return fresh;
  }

  private sweep(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + GLOBAL_WINDOW_MS;
    for (const [key, window] of this.buckets) if (window.resetAt <= now) this.buckets.delete(key);
    for (const [identity, times] of this.recent) {
      if ((times.at(-1) ?? Number.NEGATIVE_INFINITY) <= now - GLOBAL_WINDOW_MS) {
        this.recent.delete(identity);
      }
    }
  }
}

function globalRefusal(retryAfterMs: number): RateLimitVerdict {
  return {
    refused: true,
    headers: {
      'Retry-After': String(Math.ceil(retryAfterMs / 1000)),
      'X-RateLimit-Global': 'true',
      'X-RateLimit-Scope': 'global',
    },
    body: rateLimitBody(retryAfterMs, true),
  };
}

function rateLimitBody(retryAfterMs: number, global: boolean): RateLimitBody {
  return {
    message: 'You are being rate limited.',
    retry_after: Number((retryAfterMs / 1000).toFixed(3)),
    global,
    code: 0,
  };
}

const bucketIds = new Map<string, string>();

/** A stable, opaque bucket id per route template, like the platform's. */
export function bucketOf(route: string): string {
  let bucket = bucketIds.get(route);
  if (!bucket) {
    bucket = createHash('sha256').update(route).digest('hex').slice(0, 32);
    bucketIds.set(route, bucket);
  }
  return bucket;
}
