// What both reporters share: the service's address and token, one request retried with backoff on
// no answer, 5xx and 429 (after its Retry-After), and the error every failure becomes.

import type { ApiErrorBody } from './contract.js';

/** The global `fetch` fits; a test's or a proxy's can stand in. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * - `refused`: the service answered 4xx other than 429 (a bad token, a body it rejects). Resending
 *   would be refused again, so it is not retried: a refused batch is dropped (`dropped`).
 * - `unavailable`: no answer, a 5xx or a 429, still so after the retries. What was queued is kept
 *   and sent again at the next tick.
 * - `incomplete`: every part of a snapshot was accepted but the service does not hold it whole.
 * - `overflow`: a shard's queue was full: the membership reporter dropped its oldest events
 *   (`dropped`); the guild-state reporter starts a new stream with every guild's full state.
 * - `invalid`: an argument the service would refuse (caught before sending: a guild-state report
 *   larger than a batch may be, a change to a guild never given whole), or a closed reporter.
 * - `conflict`: 409 `VersionConflict`: another process started a newer guild-state stream for the
 *   shard; this reporter stops reporting that shard.
 * - `drift`: the service still differs from a guild's full state it was just sent; the guild is not
 *   sent again until it changes.
 */
export type ReporterErrorKind =
  'refused' | 'unavailable' | 'incomplete' | 'overflow' | 'invalid' | 'conflict' | 'drift';

export class ReporterError extends Error {
  override readonly name = 'ReporterError';
  readonly kind: ReporterErrorKind;
  readonly shardId: number | undefined;
  /** The HTTP status of the service's answer, when there was one. */
  readonly status: number | undefined;
  /** The service's error code (`BadRequest`, `Restricted`, `RateLimited`, …). */
  readonly code: string | undefined;
  readonly details: ApiErrorBody['details'];
  /**
   * Events or reports lost with this error: the service keeps those guilds as it last heard of
   * them until the shard's next snapshot, or the guild's next full state.
   */
  readonly dropped: number;

  constructor(
    kind: ReporterErrorKind,
    message: string,
    extra: {
      shardId?: number;
      status?: number;
      code?: string;
      details?: ApiErrorBody['details'];
      dropped?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: extra.cause });
    this.kind = kind;
    this.shardId = extra.shardId;
    this.status = extra.status;
    this.code = extra.code;
    this.details = extra.details;
    this.dropped = extra.dropped ?? 0;
  }
}

/** Where the service is, and how hard to try reaching it: every reporter's options. */
export interface RequestOptions {
  /** Where the service is, e.g. `https://bms.example`. */
  baseUrl: string;
  /** An API token (`ara_…`) of a `ROOT_USERS` user. */
  token: string;
  fetch?: FetchLike;
  /** Retries of one request (no answer, 5xx, 429) before it fails. Default 4. */
  maxRetries?: number;
  /** The first retry's delay, doubled at each retry (with jitter). Default 500 ms. */
  retryDelayMs?: number;
  /** A `Retry-After` longer than this fails the request instead of waiting it out. Default 60 s. */
  maxRetryWaitMs?: number;
  /** Per request, the answer's body included. Default 10 s. */
  timeoutMs?: number;
}

export type Method = 'GET' | 'PUT' | 'POST';

export interface Transport {
  /**
   * One request, retried with backoff on no answer, 5xx and 429 (after its Retry-After); `body` is
   * JSON text. Resolves with what `read` makes of the answer, or rejects with a
   * {@link ReporterError}: `refused` at once for any other 4xx.
   */
  call<T>(
    method: Method,
    path: string,
    body: string | undefined,
    shardId: number | undefined,
    read: (json: unknown) => T | undefined,
  ): Promise<T>;
  /** Whether a 429's Retry-After still holds every request. */
  paused(): boolean;
}

/** `onAttempt` hears of each attempt as it starts (a shard's last request, for its heartbeat). */
export function createTransport(
  options: RequestOptions,
  onAttempt: (shardId: number) => void = () => undefined,
): Transport {
  // From JavaScript a missing variable arrives as undefined: say which option, not "Invalid URL".
  const baseUrl = serviceUrl(options.baseUrl);
  if (typeof options.token !== 'string' || options.token === '') {
    throw new TypeError(
      'token must be an API token (ara_…) of a ROOT_USERS user, e.g. from BMS_TOKEN',
    );
  }
  const fetchImpl: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const maxRetries = options.maxRetries ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 60_000;
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
  /** A 429 holds every request until then: the service limits per user, not per shard. */
  let pausedUntil = 0;
  /** The first refusal of the token says what to fix; the ones after it only what happened. */
  let hinted = false;

  async function once<T>(
    method: Method,
    path: string,
    body: string | undefined,
    shardId: number | undefined,
    read: (json: unknown) => T | undefined,
  ): Promise<{ value: T } | { failure: ReporterError; waitMs?: number }> {
    if (shardId !== undefined) onAttempt(shardId);
    let response: Response;
    try {
      response = await fetchImpl(`${baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.token}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const message = `${method} ${path}: ${describeFailure(error, timeoutMs)}`;
      return { failure: new ReporterError('unavailable', message, { shardId, cause: error }) };
    }
    if (response.ok) {
      const value = read(await response.json().catch(() => undefined));
      if (value !== undefined) return { value };
      const message = `${method} ${path}: ${response.status} with an answer not as documented`;
      return {
        failure: new ReporterError('unavailable', message, { shardId, status: response.status }),
      };
    }
    const error = await readError(response);
    const fix = hinted ? undefined : whatToFix(response.status, error.code);
    if (fix !== undefined) hinted = true;
    const failure = new ReporterError(
      response.status === 429 || response.status >= 500 ? 'unavailable' : 'refused',
      `${method} ${path}: ${response.status} ${error.code}: ${error.message}${fix === undefined ? '' : `. ${fix}`}`,
      { shardId, status: response.status, code: error.code, details: error.details },
    );
    if (failure.kind === 'refused') throw failure;
    if (response.status !== 429) return { failure };
    const waitMs = retryAfterMs(response.headers.get('retry-after'), Date.now());
    if (waitMs !== undefined) pausedUntil = Math.max(pausedUntil, Date.now() + waitMs);
    return { failure, waitMs };
  }

  return {
    async call(method, path, body, shardId, read) {
      for (let attempt = 0; ; attempt += 1) {
        const paused = pausedUntil - Date.now();
        if (paused > maxRetryWaitMs) {
          throw new ReporterError(
            'unavailable',
            `${method} ${path}: rate limited for ${Math.ceil(paused / 1000)} s more`,
            { shardId, status: 429, code: 'RateLimited' },
          );
        }
        if (paused > 0) await sleep(paused);
        const outcome = await once(method, path, body, shardId, read);
        if ('value' in outcome) return outcome.value;
        const delay = outcome.waitMs ?? backoff(retryDelayMs, attempt);
        if (attempt >= maxRetries || delay > maxRetryWaitMs) throw outcome.failure;
        // A 429's wait is already in pausedUntil, which the next attempt waits out.
        if (outcome.waitMs === undefined) await sleep(delay);
      }
    },
    paused: () => Date.now() < pausedUntil,
  };
}

function serviceUrl(value: unknown): string {
  try {
    if (typeof value === 'string') return new URL(value).href.replace(/\/+$/, '');
  } catch {
    // Said below, with the value.
  }
  throw new TypeError(
    `baseUrl must be the service's URL (e.g. http://localhost:3000), not ${String(value)}`,
  );
}

export function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be above 0`);
  return value;
}

/** A whole number from 1 to `max`. */
export function wholeUpTo(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be a whole number from 1 to ${max}`);
  }
  return value;
}

export function isShardId(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 65_535;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Reports a background failure without ever throwing into a timer or a bot's event handler. */
export function errorReporter(
  onError: ((error: ReporterError) => void) | undefined,
): (error: unknown) => void {
  // Left unreported, a feed that stopped working would only show as a service that distrusts it.
  const handler =
    onError ?? ((error: ReporterError) => console.error(`[bot-reporter] ${error.message}`));
  return (error) => {
    try {
      handler(
        error instanceof ReporterError
          ? error
          : new ReporterError('unavailable', String(error), { cause: error }),
      );
    } catch (thrown) {
      // Thrown from a timer or a bot's event handler, it would take the bot down.
      console.error('[bot-reporter] onError threw', thrown);
    }
  };
}

function sleep(ms: number): Promise<void> {
  // Not unref()ed, unlike the reporters' ticks: a retry is part of a request someone is waiting
  // for (close() at shutdown among them), and a process must not exit in the middle of it.
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Exponential, with jitter so that many shards refused at once do not come back at once. */
function backoff(baseMs: number, attempt: number): number {
  return baseMs * 2 ** attempt * (0.5 + Math.random() / 2);
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from `now`. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  // Duck-typed: fetch's errors may come from another realm (a test runner's vm), where
  // `instanceof Error` is false.
  if (!isRecord(error) || typeof error.message !== 'string') return String(error);
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  // Node's fetch says only "fetch failed"; the cause says why (ECONNREFUSED, a DNS failure, …).
  const { cause } = error;
  return isRecord(cause) && typeof cause.message === 'string' && cause.message !== ''
    ? `${error.message}: ${cause.message}`
    : error.message;
}

/**
 * What to do about a refused token, for the first such answer: the service's message says what is
 * wrong, not where the token comes from.
 */
function whatToFix(status: number, code: string): string | undefined {
  const create =
    '`npm run cli -- tokens:create --user <id> --name bot` where the service runs makes one';
  if (status === 401) {
    return `The service does not know this token (revoked, expired, or another service's): ${create}`;
  }
  if (status === 403 && code === 'ApiBanned') {
    return 'The token or its user is banned: `npm run cli -- users:unban` or `tokens:unban` lifts it';
  }
  if (status === 403) {
    return `To fix: the token must be an API token (ara_…, not a login's arl_…) without a scope, of a user whose id is in the service's ROOT_USERS (add the id given to tokens:create --user, then restart the service); ${create}`;
  }
  return undefined;
}

async function readError(response: Response): Promise<ApiErrorBody> {
  const body: unknown = await response.json().catch(() => undefined);
  if (isRecord(body) && typeof body.message === 'string' && typeof body.code === 'string') {
    const details = Array.isArray(body.details)
      ? (body.details as NonNullable<ApiErrorBody['details']>)
      : undefined;
    return { message: body.message, code: body.code, details };
  }
  return { message: response.statusText || 'no error body', code: `HTTP ${response.status}` };
}
