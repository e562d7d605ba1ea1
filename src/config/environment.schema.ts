import { Transform } from 'src/common/validation/transform-decorators';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  ValidatorConstraintInterface,
} from 'class-validator';
import { LOG_LEVELS, type LogLevel } from 'src/common/logging/log-level';
import { notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import { BUDGET_PATTERN, RATE_LIMIT_BUCKETS } from 'src/common/rate-limit/rate-limit-buckets';
import { parseTrustProxy } from 'src/config/trust-proxy';
import {
  OTLP_PROTOCOLS,
  TRACES_EXPORTERS,
  TRACES_SAMPLERS,
  type OtlpProtocol,
  type TracesExporter,
  type TracesSampler,
} from 'src/common/tracing/tracing-settings';
import { OTLP_HEADERS_PATTERN } from 'src/config/tracing-config';

const OTLP_PROTOCOL_MESSAGE = (name: string): string =>
  `${name} must be http/protobuf or http/json (grpc is not supported: use the collector's HTTP port, 4318)`;

const BUDGET_MESSAGE = (name: string): string =>
  `${name} must be <requests>/<seconds>, both whole numbers from 1, e.g. 5/30`;

/** Empty strings count as "not set", so `FOO=` in a .env file falls back to the default. */
const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const toInteger = ({ value }: { value: unknown }): unknown => {
  const v = emptyToUndefined({ value });
  return typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v;
};

const toNumber = ({ value }: { value: unknown }): unknown => {
  const v = emptyToUndefined({ value });
  return typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v.trim()) : v;
};

const toBoolean = ({ value }: { value: unknown }): unknown => {
  const v = emptyToUndefined({ value });
  if (typeof v !== 'string') return v;
  const normalised = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalised)) return true;
  if (['false', '0', 'no', 'off'].includes(normalised)) return false;
  return v;
};

const toList = ({ value }: { value: unknown }): unknown => {
  const v = emptyToUndefined({ value });
  return typeof v === 'string'
    ? v
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
    : v;
};

@ValidatorConstraint({ name: 'databaseUrl' })
class DatabaseUrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return (
      typeof value === 'string' &&
      (value === 'memory://' || /^postgres(ql)?:\/\/[^\s]+$/.test(value))
    );
  }
  defaultMessage(): string {
    return 'DATABASE_URL must be a postgres:// (or postgresql://) URL, or memory:// for an in-memory database';
  }
}

@ValidatorConstraint({ name: 'base64Key32' })
class Base64Key32Constraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return false;
    return Buffer.from(value, 'base64').length === 32;
  }
  defaultMessage(): string {
    return 'TOKEN_ENCRYPTION_KEY must be 32 bytes encoded as base64 (e.g. the output of `openssl rand -base64 32`)';
  }
}

@ValidatorConstraint({ name: 'trustProxy' })
class TrustProxyConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && 'value' in parseTrustProxy(value);
  }
  defaultMessage(args: ValidationArguments): string {
    const parsed = typeof args.value === 'string' ? parseTrustProxy(args.value) : undefined;
    return parsed && 'problem' in parsed ? parsed.problem : 'TRUST_PROXY must be a string';
  }
}

const REST_PROXY_URL_MESSAGE =
  'DISCORD_REST_PROXY_URL must be an http(s) URL of a REST proxy, without credentials, query or fragment, such as http://discord-proxy:8080';

/**
 * The raw environment as the service accepts it. Names are the variables' own so that validation
 * messages name the variable; `loadConfig` turns this into the typed `AppConfig`.
 */
export class EnvironmentSchema {
  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 0 to 65535' })
  PORT?: number;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  HOST?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Validate(DatabaseUrlConstraint)
  DATABASE_URL?: string;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'METRICS_PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'METRICS_PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'METRICS_PORT must be an integer from 0 to 65535' })
  METRICS_PORT?: number;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  METRICS_HOST?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'METRICS_TOKEN must be at least 32 characters' })
  METRICS_TOKEN?: string;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_MAX_STREAMS must be an integer from 1 to 100000' })
  @Min(1, { message: 'EVENTS_MAX_STREAMS must be an integer from 1 to 100000' })
  @Max(100000, { message: 'EVENTS_MAX_STREAMS must be an integer from 1 to 100000' })
  EVENTS_MAX_STREAMS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_MAX_STREAMS_PER_USER must be an integer from 1 to 1000' })
  @Min(1, { message: 'EVENTS_MAX_STREAMS_PER_USER must be an integer from 1 to 1000' })
  @Max(1000, { message: 'EVENTS_MAX_STREAMS_PER_USER must be an integer from 1 to 1000' })
  EVENTS_MAX_STREAMS_PER_USER?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_MAX_STREAMS_PER_ADDRESS must be an integer from 1 to 100000' })
  @Min(1, { message: 'EVENTS_MAX_STREAMS_PER_ADDRESS must be an integer from 1 to 100000' })
  @Max(100000, { message: 'EVENTS_MAX_STREAMS_PER_ADDRESS must be an integer from 1 to 100000' })
  EVENTS_MAX_STREAMS_PER_ADDRESS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_MAX_ANONYMOUS_STREAMS must be an integer from 1 to 100000' })
  @Min(1, { message: 'EVENTS_MAX_ANONYMOUS_STREAMS must be an integer from 1 to 100000' })
  @Max(100000, { message: 'EVENTS_MAX_ANONYMOUS_STREAMS must be an integer from 1 to 100000' })
  EVENTS_MAX_ANONYMOUS_STREAMS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_MAX_STREAM_SECONDS must be an integer from 5 to 86400' })
  @Min(5, { message: 'EVENTS_MAX_STREAM_SECONDS must be an integer from 5 to 86400' })
  @Max(86400, { message: 'EVENTS_MAX_STREAM_SECONDS must be an integer from 5 to 86400' })
  EVENTS_MAX_STREAM_SECONDS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'EVENTS_HEARTBEAT_SECONDS must be an integer from 1 to 300' })
  @Min(1, { message: 'EVENTS_HEARTBEAT_SECONDS must be an integer from 1 to 300' })
  @Max(300, { message: 'EVENTS_HEARTBEAT_SECONDS must be an integer from 1 to 300' })
  EVENTS_HEARTBEAT_SECONDS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'DATABASE_POOL_SIZE must be an integer from 1 to 200' })
  @Min(1, { message: 'DATABASE_POOL_SIZE must be an integer from 1 to 200' })
  @Max(200, { message: 'DATABASE_POOL_SIZE must be an integer from 1 to 200' })
  DATABASE_POOL_SIZE?: number;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  DATA_DIR?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[\w:.-]{1,64}$/, {
    message: 'REDIS_KEY_PREFIX must be 1-64 letters, digits or _ : . -',
  })
  REDIS_KEY_PREFIX?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: 'DISCORD_API_URL must be an http(s) URL such as https://discord.com/api' },
  )
  DISCORD_API_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: REST_PROXY_URL_MESSAGE },
  )
  // The proxy takes the bot token: no credentials of its own (the HTTP client would drop them
  // silently), and no query or fragment, which the platform's paths would be appended to.
  @Matches(/^https?:\/\/[^/@?#\s]+(\/[^?#\s]*)?$/i, { message: REST_PROXY_URL_MESSAGE })
  DISCORD_REST_PROXY_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(SNOWFLAKE_PATTERN, { message: notASnowflake('DISCORD_CLIENT_ID') })
  DISCORD_CLIENT_ID?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  DISCORD_CLIENT_SECRET?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  DISCORD_BOT_TOKEN?: string;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 1000 to 300000' })
  @Min(1000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 1000 to 300000' })
  @Max(300_000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 1000 to 300000' })
  HTTP_REQUEST_TIMEOUT_MS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Min(100, { message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Max(60_000, { message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 60000' })
  PLATFORM_TIMEOUT_MS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'PLATFORM_INVALID_REQUEST_LIMIT must be an integer from 1 to 9500' })
  @Min(1, { message: 'PLATFORM_INVALID_REQUEST_LIMIT must be an integer from 1 to 9500' })
  @Max(9_500, { message: 'PLATFORM_INVALID_REQUEST_LIMIT must be an integer from 1 to 9500' })
  PLATFORM_INVALID_REQUEST_LIMIT?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'PLATFORM_QUEUE_MAX_WAIT_MS must be an integer from 100 to 60000' })
  @Min(100, { message: 'PLATFORM_QUEUE_MAX_WAIT_MS must be an integer from 100 to 60000' })
  @Max(60_000, { message: 'PLATFORM_QUEUE_MAX_WAIT_MS must be an integer from 100 to 60000' })
  PLATFORM_QUEUE_MAX_WAIT_MS?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'PLATFORM_CACHE_TTL must be a whole number of seconds from 1 to 300' })
  @Min(1, { message: 'PLATFORM_CACHE_TTL must be a whole number of seconds from 1 to 300' })
  @Max(300, { message: 'PLATFORM_CACHE_TTL must be a whole number of seconds from 1 to 300' })
  PLATFORM_CACHE_TTL?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'USER_GUILDS_CACHE_TTL must be a whole number of seconds from 1 to 86400' })
  @Min(1, { message: 'USER_GUILDS_CACHE_TTL must be a whole number of seconds from 1 to 86400' })
  @Max(86_400, {
    message: 'USER_GUILDS_CACHE_TTL must be a whole number of seconds from 1 to 86400',
  })
  USER_GUILDS_CACHE_TTL?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'BOT_FEED_STALE_AFTER must be a whole number of seconds from 10 to 3600' })
  @Min(10, { message: 'BOT_FEED_STALE_AFTER must be a whole number of seconds from 10 to 3600' })
  @Max(3_600, {
    message: 'BOT_FEED_STALE_AFTER must be a whole number of seconds from 10 to 3600',
  })
  BOT_FEED_STALE_AFTER?: number;

  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean({ message: 'GUILD_STATE_FEED must be true or false' })
  GUILD_STATE_FEED?: boolean;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'GUILD_STATE_MAX_AGE must be a whole number of seconds from 10 to 86400' })
  @Min(10, { message: 'GUILD_STATE_MAX_AGE must be a whole number of seconds from 10 to 86400' })
  @Max(86_400, {
    message: 'GUILD_STATE_MAX_AGE must be a whole number of seconds from 10 to 86400',
  })
  GUILD_STATE_MAX_AGE?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'GUILD_STATE_CACHE_MB must be a whole number of MiB from 1 to 4096' })
  @Min(1, { message: 'GUILD_STATE_CACHE_MB must be a whole number of MiB from 1 to 4096' })
  @Max(4_096, { message: 'GUILD_STATE_CACHE_MB must be a whole number of MiB from 1 to 4096' })
  GUILD_STATE_CACHE_MB?: number;

  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean({ message: 'EMULATOR_RATE_LIMITS must be true or false' })
  EMULATOR_RATE_LIMITS?: boolean;

  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean({ message: 'DEMO_BOT_REPORTER must be true or false' })
  DEMO_BOT_REPORTER?: boolean;

  @Transform(toList)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    {
      each: true,
      message: 'OAUTH2_ALLOWED_REDIRECTS must be a comma-separated list of http(s) URLs',
    },
  )
  OAUTH2_ALLOWED_REDIRECTS?: string[];

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(SNOWFLAKE_PATTERN, {
    message: 'MAIN_SERVER must be a guild id (a snowflake: a decimal id of at most 20 digits)',
  })
  MAIN_SERVER?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true },
    { message: 'SUPPORT_SERVER_INVITE must be an http(s) URL' },
  )
  SUPPORT_SERVER_INVITE?: string;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'LOGIN_SESSION_TTL must be a whole number of seconds, at least 60' })
  @Min(60, { message: 'LOGIN_SESSION_TTL must be a whole number of seconds, at least 60' })
  LOGIN_SESSION_TTL?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'API_TOKEN_MAX_TTL must be a whole number of seconds, at least 60' })
  @Min(60, { message: 'API_TOKEN_MAX_TTL must be a whole number of seconds, at least 60' })
  API_TOKEN_MAX_TTL?: number;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'MAX_API_TOKENS_PER_USER must be an integer from 1 to 1000' })
  @Min(1, { message: 'MAX_API_TOKENS_PER_USER must be an integer from 1 to 1000' })
  @Max(1000, { message: 'MAX_API_TOKENS_PER_USER must be an integer from 1 to 1000' })
  MAX_API_TOKENS_PER_USER?: number;

  @Transform(toList)
  @IsOptional()
  @Matches(SNOWFLAKE_PATTERN, {
    each: true,
    message: 'ROOT_USERS must be a comma-separated list of user ids (snowflakes)',
  })
  ROOT_USERS?: string[];

  @Transform(emptyToUndefined)
  @IsOptional()
  @Validate(Base64Key32Constraint)
  TOKEN_ENCRYPTION_KEY?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Validate(TrustProxyConstraint)
  TRUST_PROXY?: string;

  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean({ message: 'RATE_LIMITS_ENABLED must be true or false' })
  RATE_LIMITS_ENABLED?: boolean;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL?: LogLevel;

  // Tracing: OpenTelemetry's own variables, the subset this service honours (docs/operations.md,
  // "Tracing"). Unlike OpenTelemetry's default, traces are off unless OTEL_TRACES_EXPORTER=otlp.

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(TRACES_EXPORTERS, { message: 'OTEL_TRACES_EXPORTER must be none or otlp' })
  OTEL_TRACES_EXPORTER?: TracesExporter;

  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean({ message: 'OTEL_SDK_DISABLED must be true or false' })
  OTEL_SDK_DISABLED?: boolean;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  OTEL_SERVICE_NAME?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL such as http://localhost:4318' },
  )
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    {
      message:
        'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL such as http://localhost:4318/v1/traces',
    },
  )
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(OTLP_PROTOCOLS, { message: OTLP_PROTOCOL_MESSAGE('OTEL_EXPORTER_OTLP_PROTOCOL') })
  OTEL_EXPORTER_OTLP_PROTOCOL?: OtlpProtocol;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(OTLP_PROTOCOLS, { message: OTLP_PROTOCOL_MESSAGE('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') })
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: OtlpProtocol;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(OTLP_HEADERS_PATTERN, {
    message: 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas',
  })
  OTEL_EXPORTER_OTLP_HEADERS?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(TRACES_SAMPLERS, {
    message: `OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(', ')}`,
  })
  OTEL_TRACES_SAMPLER?: TracesSampler;

  @Transform(toNumber)
  @IsOptional()
  @IsNumber({}, { message: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
  @Min(0, { message: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
  @Max(1, { message: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
  OTEL_TRACES_SAMPLER_ARG?: number;
}

// One budget variable per rate-limit bucket (RATE_LIMIT_<BUCKET>), named where the bucket is declared.
for (const { env } of Object.values(RATE_LIMIT_BUCKETS)) {
  Transform(emptyToUndefined)(EnvironmentSchema.prototype, env);
  IsOptional()(EnvironmentSchema.prototype, env);
  Matches(BUDGET_PATTERN, { message: BUDGET_MESSAGE(env) })(EnvironmentSchema.prototype, env);
}
