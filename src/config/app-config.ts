import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { LogLevel } from 'src/common/logging/log-level';
import { unwritablePath } from 'src/common/startup/startup-failure';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { EnvironmentSchema } from 'src/config/environment.schema';
import {
  parseBudget,
  RATE_LIMIT_BUCKETS,
  type BucketBudget,
  type RateLimitBucket,
  type RateLimitSettings,
  type RateLimitVariable,
} from 'src/common/rate-limit/rate-limit-buckets';
import { parseTrustProxy, type TrustProxy } from 'src/config/trust-proxy';
import { tracingConfig, type TracingConfig } from 'src/config/tracing-config';

/** The request body limit (docs/errors.md): larger bodies are refused before they are parsed. */
export const BODY_LIMIT_BYTES = 100 * 1024;
/**
 * PLATFORM_INVALID_REQUEST_LIMIT unless set: a thousand short of the platform's 10,000, room for
 * answers already under way. With Redis, it is the whole fleet's.
 */
export const DEFAULT_INVALID_REQUEST_LIMIT = 9_000;
/** PostgreSQL connections per instance unless DATABASE_POOL_SIZE says otherwise. */
const DEFAULT_POSTGRES_POOL_SIZE = 10;

/**
 * The redirect URI allowed when OAUTH2_ALLOWED_REDIRECTS is not set: Swagger UI's own page on the
 * service's port (PORT), so that a demo on another port hands out codes it accepts.
 */
export function defaultRedirectUri(port: number): string {
  return `http://localhost:${port}/docs/oauth2-redirect.html`;
}

/** The default redirect URI on the default port: the one the committed OpenAPI document shows. */
export const DEFAULT_REDIRECT_URI = defaultRedirectUri(3000);

export type DatabaseConfig =
  /** `poolSize`: connections this instance may hold (DATABASE_POOL_SIZE). */
  | { readonly engine: 'postgres'; readonly url: string; readonly poolSize: number }
  /**
   * `directory: null` keeps the embedded database in memory. `besideService`: connect to the
   * database of a service that runs on `directory` and shares it, when there is one (the admin CLI).
   */
  | { readonly engine: 'pglite'; readonly directory: string | null; readonly besideService?: true };

export interface HttpConfig {
  readonly port: number;
  readonly host: string;
  /** Which proxies may name the client in `X-Forwarded-For` (TRUST_PROXY). */
  readonly trustProxy: TrustProxy;
  readonly bodyLimitBytes: number;
  /** A request's headers and body must arrive within this time, or it is refused (slow clients). */
  readonly requestTimeoutMs: number;
}

/** The Prometheus endpoint: its own listener, off the public API (off when no port is set). */
export interface MetricsConfig {
  /** METRICS_PORT; null: no metrics are collected or served. */
  readonly port: number | null;
  /** METRICS_HOST: loopback unless set. */
  readonly host: string;
  /** METRICS_TOKEN: when set, scrapes must send `Authorization: Bearer <token>`. */
  readonly token: string | null;
}

/** Server-Sent Events streams (`GET …/events`): limits and keep-alive. */
export interface EventsConfig {
  /** EVENTS_MAX_STREAMS: open streams this instance serves at most. */
  readonly maxStreams: number;
  /** EVENTS_MAX_STREAMS_PER_USER: open streams of one user on this instance. */
  readonly maxStreamsPerUser: number;
  /** EVENTS_MAX_STREAMS_PER_ADDRESS: open anonymous streams of one client address on this instance. */
  readonly maxStreamsPerAddress: number;
  /**
   * EVENTS_MAX_ANONYMOUS_STREAMS: open anonymous streams (bot health) on this instance; the rest
   * of EVENTS_MAX_STREAMS is kept for signed-in users.
   */
  readonly maxAnonymousStreams: number;
  /** EVENTS_MAX_STREAM_SECONDS: a stream ends after this long (its client reconnects and resumes). */
  readonly maxStreamMs: number;
  /** EVENTS_HEARTBEAT_SECONDS: a comment is sent this often, so proxies keep idle streams open. */
  readonly heartbeatMs: number;
}

export interface PlatformConfig {
  /** Base of the platform's REST API; requests go to `${apiUrl}/v10/...`. */
  readonly apiUrl: string;
  /**
   * Base of the REST proxy that owns the bot token's rate limits (DISCORD_REST_PROXY_URL plus
   * `/api`): calls with the bot token go to `${restProxyApiUrl}/v10/...`, the OAuth2 client's
   * and users' bearer calls still to `apiUrl`. Null: all go to `apiUrl`,
   * as in demo mode, whose emulator is no shared platform (and a proxy would send the demo's
   * calls to Discord).
   */
  readonly restProxyApiUrl: string | null;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly botToken: string | null;
  /** No bot token: the built-in emulator stands in for the platform. */
  readonly demoMode: boolean;
  /** Per request attempt. */
  readonly timeoutMs: number;
  /**
   * Invalid answers (401, 403, 429) in ten minutes at which platform calls stop, for the whole
   * fleet when Redis is configured (docs/platform.md, "The invalid-request budget").
   */
  readonly invalidRequestLimit: number;
  /**
   * A call waiting for a platform bucket the service shares is refused (429) when its estimated
   * wait is longer (docs/request-costs.md, "Shared platform buckets").
   */
  readonly queueMaxWaitMs: number;
  /** How long guild, channel and member lookups of the bot are cached. */
  readonly cacheTtlSeconds: number;
  /** How long a user's guild list (read with the user's grant) is cached. */
  readonly userGuildsCacheTtlSeconds: number;
  /**
   * The bot's membership feed is trusted while every shard has reported within this time
   * (docs/bot-membership.md); otherwise ids it lacks are checked with the platform.
   */
  readonly botFeedStaleAfterSeconds: number;
  /**
   * Per-guild routes read a guild from the bot's guild-state feed while it is live
   * (docs/guild-state.md); false: always from the platform (GUILD_STATE_FEED).
   */
  readonly guildStateFeed: boolean;
  /**
   * A guild's fed state is used while its shard has reported within this time, so a bot that
   * restarts or loses its connection for a while does not send every guild open to the platform
   * at once; past it, the platform (GUILD_STATE_MAX_AGE).
   */
  readonly guildStateMaxAgeSeconds: number;
  /** Memory for guild states held per instance, in bytes of their JSON (GUILD_STATE_CACHE_MB). */
  readonly guildStateCacheBytes: number;
  /** Demo mode: the emulator enforces the platform's rate limits (EMULATOR_RATE_LIMITS). */
  readonly emulatorRateLimits: boolean;
  /**
   * Demo mode: the emulator's bot reports its guilds and what it sees in them, as a bot would;
   * false leaves the feeds to a bot started against the demo, such as the reporter package's fake
   * bot (DEMO_BOT_REPORTER).
   */
  readonly demoBotReporter: boolean;
}

export interface SessionsConfig {
  readonly loginSessionTtlSeconds: number;
  readonly apiTokenMaxTtlSeconds: number;
  readonly maxApiTokensPerUser: number;
}

/** The validated, typed configuration. Only `src/config` builds it; everything else injects it. */
export class AppConfig {
  readonly http!: HttpConfig;
  readonly metrics!: MetricsConfig;
  /** OpenTelemetry traces (OTEL_*): off unless OTEL_TRACES_EXPORTER=otlp. */
  readonly tracing!: TracingConfig;
  readonly events!: EventsConfig;
  readonly database!: DatabaseConfig;
  readonly dataDir!: string;
  readonly redisUrl!: string | null;
  /** Prefix of every Redis key, so that several deployments can share one Redis. */
  readonly redisKeyPrefix!: string;
  readonly platform!: PlatformConfig;
  readonly oauth2!: { readonly allowedRedirects: readonly string[] };
  readonly community!: { readonly mainServer: string; readonly supportServerInvite: string };
  readonly sessions!: SessionsConfig;
  readonly rootUsers!: readonly string[];
  readonly tokenEncryptionKey!: Buffer;
  readonly rateLimits!: RateLimitSettings;
  readonly logLevel!: LogLevel;

  constructor(values: AppConfig) {
    Object.assign(this, values);
    Object.freeze(this);
  }
}

/** A configuration problem; its message is one line naming the variable(s) at fault. */
export class ConfigError extends Error {
  constructor(problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Validates the environment and builds the typed configuration. Throws `ConfigError` naming every bad
 * variable. The only side effect: in the embedded file mode without `TOKEN_ENCRYPTION_KEY`, a key is
 * generated once into `DATA_DIR` and reused on later starts.
 */
export function loadConfig(environment: Environment, cwd: string = process.cwd()): AppConfig {
  const env = validateEnvironment(environment);
  const dataDir = resolve(cwd, env.DATA_DIR ?? '.data');
  const database = databaseConfig(env.DATABASE_URL, env.DATABASE_POOL_SIZE, dataDir);
  const botToken = env.DISCORD_BOT_TOKEN ?? null;
  checkCrossFieldRules(env, database);

  return new AppConfig({
    http: {
      port: env.PORT ?? 3000,
      // Loopback unless asked: a demo (or a misconfigured deployment) is not reachable from the
      // network by accident. The Docker image sets HOST=0.0.0.0.
      host: env.HOST ?? '127.0.0.1',
      trustProxy: trustProxy(env.TRUST_PROXY),
      bodyLimitBytes: BODY_LIMIT_BYTES,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS ?? 30_000,
    },
    database,
    dataDir,
    metrics: {
      port: env.METRICS_PORT ?? null,
      host: env.METRICS_HOST ?? '127.0.0.1',
      token: env.METRICS_TOKEN ?? null,
    },
    tracing: tracingConfig(env),
    events: {
      maxStreams: env.EVENTS_MAX_STREAMS ?? 1_000,
      maxStreamsPerUser: env.EVENTS_MAX_STREAMS_PER_USER ?? 5,
      maxStreamsPerAddress: env.EVENTS_MAX_STREAMS_PER_ADDRESS ?? 10,
      maxAnonymousStreams: env.EVENTS_MAX_ANONYMOUS_STREAMS ?? 200,
      maxStreamMs: (env.EVENTS_MAX_STREAM_SECONDS ?? 3600) * 1000,
      heartbeatMs: (env.EVENTS_HEARTBEAT_SECONDS ?? 15) * 1000,
    },
    redisUrl: env.REDIS_URL ?? null,
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'bms:',
    platform: {
      apiUrl: (env.DISCORD_API_URL ?? 'https://discord.com/api').replace(/\/+$/, ''),
      restProxyApiUrl: botToken === null ? null : restProxyApiUrl(env.DISCORD_REST_PROXY_URL),
      clientId: env.DISCORD_CLIENT_ID ?? DEMO_DEFAULTS.clientId,
      clientSecret: env.DISCORD_CLIENT_SECRET ?? DEMO_DEFAULTS.clientSecret,
      botToken,
      demoMode: botToken === null,
      timeoutMs: env.PLATFORM_TIMEOUT_MS ?? 5_000,
      invalidRequestLimit: env.PLATFORM_INVALID_REQUEST_LIMIT ?? DEFAULT_INVALID_REQUEST_LIMIT,
      // About two resets of the scarcest bucket (the bot's guild list, one call a second).
      queueMaxWaitMs: env.PLATFORM_QUEUE_MAX_WAIT_MS ?? 2_000,
      cacheTtlSeconds: env.PLATFORM_CACHE_TTL ?? 5,
      userGuildsCacheTtlSeconds: env.USER_GUILDS_CACHE_TTL ?? 300,
      botFeedStaleAfterSeconds: env.BOT_FEED_STALE_AFTER ?? 120,
      guildStateFeed: env.GUILD_STATE_FEED ?? true,
      guildStateMaxAgeSeconds: env.GUILD_STATE_MAX_AGE ?? 600,
      guildStateCacheBytes: (env.GUILD_STATE_CACHE_MB ?? 64) * 1_048_576,
      emulatorRateLimits: env.EMULATOR_RATE_LIMITS ?? false,
      demoBotReporter: env.DEMO_BOT_REPORTER ?? true,
    },
    oauth2: {
      // PORT=0 (any free port, known only once bound) keeps the default port's.
      allowedRedirects: env.OAUTH2_ALLOWED_REDIRECTS ?? [defaultRedirectUri(env.PORT || 3000)],
    },
    community: {
      mainServer: env.MAIN_SERVER ?? DEMO_DEFAULTS.mainServer,
      supportServerInvite: env.SUPPORT_SERVER_INVITE ?? DEMO_DEFAULTS.supportServerInvite,
    },
    sessions: {
      loginSessionTtlSeconds: env.LOGIN_SESSION_TTL ?? 604_800,
      apiTokenMaxTtlSeconds: env.API_TOKEN_MAX_TTL ?? 315_360_000,
      maxApiTokensPerUser: env.MAX_API_TOKENS_PER_USER ?? 25,
    },
    // In demo mode the default demo login may use the internal routes, so a demo shows them.
    rootUsers: env.ROOT_USERS ?? (botToken === null ? [DEMO_DEFAULTS.login] : []),
    tokenEncryptionKey: tokenEncryptionKey(env.TOKEN_ENCRYPTION_KEY, database, dataDir),
    rateLimits: {
      enabled: env.RATE_LIMITS_ENABLED ?? true,
      buckets: bucketBudgets(env),
      operators: env.ROOT_USERS ?? (botToken === null ? [DEMO_DEFAULTS.login] : []),
    },
    logLevel: env.LOG_LEVEL ?? 'info',
  });
}

function bucketBudgets(env: EnvironmentSchema): Record<RateLimitBucket, BucketBudget> {
  const budgets = {} as Record<RateLimitBucket, BucketBudget>;
  for (const [bucket, defaults] of Object.entries(RATE_LIMIT_BUCKETS)) {
    // Each bucket's variable is declared with its bucket and validated by the schema.
    const configured = (env as Partial<Record<RateLimitVariable, string>>)[defaults.env];
    budgets[bucket as RateLimitBucket] = configured
      ? parseBudget(configured)
      : { limit: defaults.limit, windowSeconds: defaults.windowSeconds };
  }
  return budgets;
}

/**
 * The proxy serves the platform's paths (`/api/v10/…`) under its own address: the setting names
 * the address, and a trailing `/api` is accepted too.
 */
function restProxyApiUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  return `${raw.replace(/\/+$/, '').replace(/\/api$/, '')}/api`;
}

function trustProxy(raw: string | undefined): TrustProxy {
  const parsed = parseTrustProxy(raw);
  // Validation has already refused a bad value; this only narrows the type.
  if ('problem' in parsed) throw new ConfigError([parsed.problem]);
  return parsed.value;
}

/** The process environment, after loading `.env` from the working directory when there is one. */
export function readProcessEnvironment(cwd: string = process.cwd()): Environment {
  const dotEnv = join(cwd, '.env');
  // Variables already set win over the file (loadEnvFile never overrides them).
  if (existsSync(dotEnv)) process.loadEnvFile(dotEnv);
  return process.env;
}

function validateEnvironment(environment: Environment): EnvironmentSchema {
  const env = plainToInstance(EnvironmentSchema, { ...environment });
  const errors = validateSync(env, { forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigError(errors.flatMap(messagesOf));
  return env;
}

function messagesOf(error: ValidationError): string[] {
  // Messages name the variable; the value is never echoed because it may be a secret.
  const messages = Object.values(error.constraints ?? {});
  const unique = [...new Set(messages)];
  return unique.map((message) =>
    message.startsWith(error.property) ? message : `${error.property}: ${message}`,
  );
}

function databaseConfig(
  url: string | undefined,
  poolSize: number | undefined,
  dataDir: string,
): DatabaseConfig {
  if (url === undefined) return { engine: 'pglite', directory: join(dataDir, 'pglite') };
  if (url === 'memory://') return { engine: 'pglite', directory: null };
  return { engine: 'postgres', url, poolSize: poolSize ?? DEFAULT_POSTGRES_POOL_SIZE };
}

function checkCrossFieldRules(env: EnvironmentSchema, database: DatabaseConfig): void {
  const problems: string[] = [];
  if (database.engine === 'pglite' && env.DATABASE_POOL_SIZE !== undefined) {
    problems.push(
      'DATABASE_POOL_SIZE applies to PostgreSQL only: the embedded database has one connection',
    );
  }
  if (database.engine === 'postgres' && env.TOKEN_ENCRYPTION_KEY === undefined) {
    problems.push(
      'TOKEN_ENCRYPTION_KEY is required when DATABASE_URL points at PostgreSQL (32 bytes, base64)',
    );
  }
  if (env.DISCORD_BOT_TOKEN !== undefined) {
    if (env.DISCORD_CLIENT_ID === undefined) {
      problems.push('DISCORD_CLIENT_ID is required when DISCORD_BOT_TOKEN is set');
    }
    if (env.DISCORD_CLIENT_SECRET === undefined) {
      problems.push('DISCORD_CLIENT_SECRET is required when DISCORD_BOT_TOKEN is set');
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

const KEY_FILE = 'token-encryption.key';

function tokenEncryptionKey(
  configured: string | undefined,
  database: DatabaseConfig,
  dataDir: string,
): Buffer {
  if (configured !== undefined) return Buffer.from(configured, 'base64');
  if (database.engine === 'pglite' && database.directory !== null) {
    return readOrCreateKeyFile(dataDir);
  }
  // In-memory database: the data it protects dies with the process, so may the key.
  return randomBytes(32);
}

function readOrCreateKeyFile(dataDir: string): Buffer {
  const path = join(dataDir, KEY_FILE);
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== 32) {
      throw new ConfigError([`${path} must hold a 32-byte base64 key (TOKEN_ENCRYPTION_KEY)`]);
    }
    return key;
  }
  const key = randomBytes(32);
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw unwritablePath(
      dataDir,
      error,
      'give this process write access to it, or set DATA_DIR to a directory it can write',
    );
  }
  return key;
}
