/** Rate-limit buckets (docs/rate-limits.md): who is counted, and the default budget per window. */
export const RATE_LIMIT_BUCKETS = {
  /** Requests without a session, per client IP. */
  anonymous: { scope: 'ip', limit: 60, windowSeconds: 60, env: 'RATE_LIMIT_ANONYMOUS' },
  /** Requests with a session, per user. */
  authenticated: { scope: 'user', limit: 300, windowSeconds: 60, env: 'RATE_LIMIT_AUTHENTICATED' },
  /** `POST /oauth2`, per client IP. */
  oauth2: { scope: 'ip', limit: 10, windowSeconds: 60, env: 'RATE_LIMIT_OAUTH2' },
  /** Failed authentication (missing, malformed, unknown or expired token), per client IP. */
  'invalid-token': { scope: 'ip', limit: 20, windowSeconds: 60, env: 'RATE_LIMIT_INVALID_TOKEN' },
  /** `GET /users/@me/guilds?refresh=true`, per user. */
  'guilds-refresh': {
    scope: 'user',
    limit: 3,
    windowSeconds: 300,
    env: 'RATE_LIMIT_GUILDS_REFRESH',
  },
  /** `GET /users/@me/guilds/{guild_id}`, per user. */
  'guild-info': { scope: 'user', limit: 30, windowSeconds: 60, env: 'RATE_LIMIT_GUILD_INFO' },
  /**
   * A guild loaded from the platform (a guild the bot's guild-state feed does not hold live, not
   * cached), per user, whatever the route: each costs the bot token about five calls
   * (docs/request-costs.md). Charged before the calls are made.
   */
  'guild-load': { scope: 'user', limit: 30, windowSeconds: 60, env: 'RATE_LIMIT_GUILD_LOAD' },
  /**
   * Checks with the platform of a guild the bot's membership feed cannot settle (no live feed),
   * and re-reads of a user's own guild list that does not list a guild they open (they may have
   * joined since it was read), per user: what an invented guild id costs its sender
   * (docs/bot-membership.md, docs/request-costs.md).
   */
  'guild-check': { scope: 'user', limit: 30, windowSeconds: 60, env: 'RATE_LIMIT_GUILD_CHECK' },
  /**
   * Member lookups asked of the platform for the users a settings change names (a member not
   * remembered from an earlier lookup), per user: docs/request-costs.md.
   */
  'member-lookup': {
    scope: 'user',
    limit: 100,
    windowSeconds: 60,
    env: 'RATE_LIMIT_MEMBER_LOOKUP',
  },
  /** `POST /guilds/{guild_id}/settings` but a View, revert, restore and import, per user. */
  'settings-write': {
    scope: 'user',
    limit: 60,
    windowSeconds: 60,
    env: 'RATE_LIMIT_SETTINGS_WRITE',
  },
  /**
   * The bot's feed reports (`/internal/shards/{id}/…`) of ROOT_USERS' unscoped API tokens, per
   * user, counted instead of `authenticated`: a bot of thousands of shards sends a report per
   * shard every few seconds (docs/rate-limits.md). Anyone else's requests to those routes count in
   * `authenticated` as usual (and are refused by the route).
   */
  'bot-feed': {
    scope: 'user',
    limit: 60_000,
    windowSeconds: 60,
    env: 'RATE_LIMIT_BOT_FEED',
    rootUsersOnly: true,
  },
} as const;

/** Whether a bucket is counted instead of the general one, for the bot's operators only. */
export function isOperatorBucket(bucket: RateLimitBucket): boolean {
  return 'rootUsersOnly' in RATE_LIMIT_BUCKETS[bucket];
}

export type RateLimitBucket = keyof typeof RATE_LIMIT_BUCKETS;

export interface BucketBudget {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** `<limit>/<seconds>`, e.g. `60/60` or `3/300`. */
export const BUDGET_PATTERN = /^([1-9]\d{0,6})\/([1-9]\d{0,5})$/;

export function parseBudget(value: string): BucketBudget {
  const match = BUDGET_PATTERN.exec(value);
  if (!match) throw new Error(`not a budget: ${value}`);
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) };
}

/** The environment variable that sets each bucket's budget (`RATE_LIMIT_<BUCKET>`). */
export type RateLimitVariable = (typeof RATE_LIMIT_BUCKETS)[RateLimitBucket]['env'];

/** What the rate limits run on: built from the configuration (RATE_LIMITS_ENABLED, RATE_LIMIT_*). */
export interface RateLimitSettings {
  /** RATE_LIMITS_ENABLED=false turns every bucket off (load tests). */
  readonly enabled: boolean;
  readonly buckets: Readonly<Record<RateLimitBucket, BucketBudget>>;
  /** The bot's operators (ROOT_USERS): their unscoped tokens' feed reports count in `bot-feed`. */
  readonly operators: readonly string[];
}
