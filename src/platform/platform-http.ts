import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DefaultRestOptions,
  DiscordAPIError,
  HTTPError,
  type InternalRequest,
  type RateLimitData,
  RateLimitError,
  RequestMethod,
  type ResponseLike,
  REST,
} from '@discordjs/rest';
import { Logger } from '@nestjs/common';
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import type { Metrics, PlatformOutcome } from 'src/common/metrics/metrics';
import { currentCaller } from 'src/common/http/request-context';
import { SERVICE_VERSION } from 'src/common/service-version';
import { templatedUrl } from 'src/common/tracing/span-url';
import { SpanAttribute, tracer } from 'src/common/tracing/tracer';
import { AppException } from 'src/common/errors/app.exception';
import { BucketBusyError, BucketQueues, type BucketObservation } from 'src/platform/bucket-queue';
import type { IdentityLimiter } from 'src/platform/identity-limiter';
import {
  admit,
  CLOSED,
  refuses,
  settle,
  type AttemptVerdict,
  type BreakerSettings,
  type BreakerState,
} from 'src/platform/platform-breaker';
import type { IdentityId, WindowPlace } from 'src/platform/identity-window';
import { countsAsInvalid, type InvalidAnswerBudget } from 'src/platform/invalid-request-budget';
import {
  InvalidRequestBudgetSpentError,
  PlatformUnavailableError,
} from 'src/platform/platform.errors';
import type { PlatformAuth } from 'src/platform/platform.types';

export interface PlatformHttpOptions {
  /** The platform's REST base; requests go to `${apiUrl}/v10/…`. */
  apiUrl: string;
  /**
   * A REST proxy owning the bot token's rate limits for every instance (`@discordjs/proxy`): the
   * bot's calls go to `${restProxyApiUrl}/v10/…`. The OAuth2 client's and users' calls still go to
   * `apiUrl`: each is a rate-limit identity of its own, which the proxy (one limiter for everything
   * it carries) would count against the bot's global limit and queue by route (docs/platform.md).
   */
  restProxyApiUrl?: string | null;
  botToken: string;
  clientId: string;
  clientSecret: string;
  /** Per attempt, body included. */
  timeoutMs: number;
  /** Further attempts after a timeout, a network error or a 5xx, each after a growing delay. */
  retries: number;
  /** Further attempts after a 429. */
  rateLimitRetries: number;
  /** A 429 asking for a longer wait fails at once instead of holding the request. */
  maxRateLimitWaitMs: number;
  /** First backoff delay; it doubles per attempt, with jitter. */
  backoffMs: number;
  /**
   * Counts invalid answers (401, 403, 429) and stops calls, refused locally, before the platform's
   * own limit (10,000 in ten minutes, then an hour's ban of the address) is reached: the fleet's
   * in Redis, or this instance's own.
   */
  budget: InvalidAnswerBudget;
  /** Where each call's route, outcome and duration are counted. */
  metrics?: Metrics;
  /**
   * The fair, bounded queues every bot-token and OAuth2-client call waits in for its bucket
   * (docs/request-costs.md, "Shared platform buckets").
   */
  queues: BucketQueues;
  /**
   * The rates of the identities the fleet shares (the bot token's, the token endpoint's): every
   * request on the wire takes room first (docs/request-costs.md, "Shared platform identities").
   */
  identities: IdentityLimiter;
  /** When the platform counts as down, and how often it is tried then (DEFAULT_BREAKER). */
  breaker?: BreakerSettings;
}

/**
 * Six attempts in a row that found the platform down (two calls' worth, with their two retries each:
 * one failing call alone never opens it) open the breaker; then one call a second goes through to
 * see it back.
 */
export const DEFAULT_BREAKER: BreakerSettings = {
  failureThreshold: 6,
  probeIntervalMs: 1_000,
  probeStaleMs: 60_000,
};

/**
 * A call that stayed rate limited past its bounds (the transport's, or its own
 * `PlatformCall.rateLimit`). A `PlatformUnavailableError` (a 500) for callers that have no other
 * way; `retryAfterMs` is the wait the platform asked for, for those that do.
 */
export class PlatformRateLimitedError extends PlatformUnavailableError {
  constructor(
    detail: string,
    readonly retryAfterMs: number,
  ) {
    super(detail);
    this.name = 'PlatformRateLimitedError';
  }
}

/**
 * The platform's global limit: 50 calls a second per bot token, all routes together. Its queues'
 * bound and its rate (IdentityLimiter) are both held against it.
 */
export const BOT_IDENTITY: IdentityId = { key: 'bot', label: 'the bot token', perSecond: 50 };
/**
 * The calls with the OAuth2 client's credentials: the token endpoint, which the platform limits
 * per address (10 a second), so per fleet behind one address. Its revocations are counted in the
 * same rate: they are rare, and the platform's own limit of them is the same.
 */
export const CLIENT_IDENTITY: IdentityId = {
  key: 'client',
  label: "the OAuth2 token endpoint (this service's address)",
  perSecond: 10,
};

/** While calls are refused for the budget, the error is logged at most this often. */
const BUDGET_LOG_INTERVAL_MS = 60_000;

export interface PlatformCall {
  method: 'GET' | 'POST' | 'PUT';
  /** The route template, for rate-limit buckets, logs and errors: `/guilds/:guild_id`. */
  route: string;
  /** The concrete path: `/guilds/123`. */
  path: `/${string}`;
  auth: PlatformAuth;
  query?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  /**
   * The bot's lookup of its own member in a guild: it goes through a queue of its own, so that it
   * runs beside the caller's member lookup instead of after it (the transport runs one request
   * at a time per route and guild). At most one such call per guild is under way (the cache
   * coalesces them), so the two queues send at most one request more to that route at once.
   */
  ownMember?: boolean;
  /**
   * Tighter bounds on this call's rate-limit waits than the transport's (`rateLimitRetries`,
   * `maxRateLimitWaitMs`), for a call its caller can make another way: past them it fails with
   * `PlatformRateLimitedError` at once. `{ retries: 0, maxWaitMs: 0 }` waits for nothing.
   */
  rateLimit?: { retries: number; maxWaitMs: number };
}

/** Any answer that is not a 429 or a 5xx: the caller decides what a 4xx means for its route. */
export interface PlatformAnswer {
  status: number;
  body: unknown;
}

/** Appended to the transport's own `DiscordBot (…)` user agent, which the platform requires. */
const USER_AGENT_APPENDIX = `BotManagementService/${SERVICE_VERSION}`;

/** What one `send` has met so far, read by the rate-limit hook the transport calls back. */
interface CallState {
  label: string;
  /** 429 answers drawn by this call. */
  rateLimits: number;
  /** 429 answers already announced in the log. */
  announced: number;
  /** Why the rate-limit hook refused to wait, for the error. */
  refusal?: string;
  /** The wait the rate-limit hook refused, in ms. */
  refusedWaitMs?: number;
  /** This call's own bounds on rate-limit waits (PlatformCall.rateLimit), else the transport's. */
  rateLimit: { retries: number; maxWaitMs: number };
  /** How the last attempt failed, for the metrics of a call that ends in an error. */
  failure?: PlatformOutcome;
  /** What the platform's answers said of the call's bucket, for its queue. */
  observed: BucketObservation;
  /** The call's span (a no-op one while tracing is off); each attempt on the wire is its child. */
  span: Span;
  /** Requests this call has put on the wire so far. */
  attempts: number;
  /** The shared identity each request of the call takes room in; null for a user's own token. */
  identity: IdentityId | null;
  /**
   * Room in the identity's rate taken before the call's bucket turn (`queued`), for its first
   * request; null once that request took it (a retry takes room of its own), or never taken.
   */
  room: WindowPlace | null;
  /** Who the call is charged to (currentCaller). */
  caller: string;
}

/**
 * The transport to the platform, on `@discordjs/rest`: it learns the platform's bucket ids from
 * `X-RateLimit-Bucket`, queues requests per bucket and major id, holds every request during a
 * global limit, waits out 429s and applies the timeout. On top of it, this class adds what the
 * service's answers depend on:
 *
 * - a bound on a call's 429s (`rateLimitRetries`) and on any single wait (`maxRateLimitWaitMs`),
 *   so a request that depends on the platform still answers in bounded time;
 * - retries of timeouts, network errors and 5xx with exponential backoff and jitter (the library
 *   would retry at once, into a platform that is failing), then `PlatformUnavailableError`;
 * - a body read inside the timeout, so an answer whose body never ends counts as a timeout;
 * - the invalid-request budget: the library only counts invalid answers (once per process, for
 *   every client); this one refuses calls locally before the platform's ban.
 *
 * The bot and the OAuth2 client credentials each have one long-lived manager, as the platform
 * limits each of them as one identity; each user token gets a manager of its own for its call, so
 * one user's limits never queue another user's requests.
 */
export class PlatformHttp {
  private readonly logger = new Logger(PlatformHttp.name);
  private readonly invalidAnswers: InvalidAnswerBudget;
  private budgetLoggedAt = Number.NEGATIVE_INFINITY;
  /** The call each transport callback belongs to (the library's hooks carry no request). */
  private readonly calls = new AsyncLocalStorage<CallState>();
  private readonly bot: REST;
  /** The bot's lookups of its own members (PlatformCall.ownMember). */
  private readonly botOwnMember: REST;
  private readonly app: REST;
  private readonly queues: BucketQueues;
  private readonly breakerSettings: BreakerSettings;
  /**
   * Whether the platform is seen down, per instance (src/platform/platform-breaker.ts): one breaker
   * for the calls to the platform itself, one for the bot's calls through a REST proxy, so that a
   * proxy that is down does not stop logins and users' own calls.
   */
  private readonly breakers: Record<BreakerPath, BreakerState> = {
    platform: CLOSED,
    proxy: CLOSED,
  };

  constructor(private readonly options: PlatformHttpOptions) {
    this.invalidAnswers = options.budget;
    this.queues = options.queues;
    this.breakerSettings = options.breaker ?? DEFAULT_BREAKER;
    // The breaker's gauge has a value from the start, for dashboards and alerts to read.
    options.metrics?.platformBreaker('platform', 'closed');
    if (options.restProxyApiUrl) options.metrics?.platformBreaker('proxy', 'closed');
    const botApi = options.restProxyApiUrl ?? options.apiUrl;
    this.bot = this.manager(botApi, true);
    this.botOwnMember = this.manager(botApi, true);
    this.app = this.manager(options.apiUrl, true);
  }

  async send(call: PlatformCall): Promise<PlatformAnswer> {
    const label = `${call.method} ${call.route}`;
    const state: CallState = {
      label,
      rateLimits: 0,
      announced: 0,
      observed: {},
      rateLimit: call.rateLimit ?? {
        retries: this.options.rateLimitRetries,
        maxWaitMs: this.options.maxRateLimitWaitMs,
      },
      // A child of the request (or job) it is made for; its attempts are its own children.
      span: tracer.startSpan(`platform ${label}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          [SpanAttribute.platformRoute]: label,
          [SpanAttribute.platformIdentity]: call.auth.kind,
        },
      }),
      attempts: 0,
      identity: identityOf(call.auth),
      room: null,
      caller: currentCaller(),
    };
    const started = performance.now();
    let outcome: PlatformOutcome = 'network_error';
    try {
      // Known down: refused before it waits in a queue behind calls that are timing out.
      const path = call.auth.kind === 'bot' && this.options.restProxyApiUrl ? 'proxy' : 'platform';
      if (refuses(this.breakers[path], performance.now(), this.breakerSettings)) {
        throw this.refusedWhileDown(state);
      }
      const answer = await this.queued(call, state, () =>
        this.calls.run(state, () => this.sendWithRetries(call, state)),
      );
      outcome = outcomeOf(answer.status);
      return answer;
    } catch (error) {
      outcome = error instanceof BucketBusyError ? 'refused_by_queue' : (state.failure ?? outcome);
      throw error;
    } finally {
      this.options.metrics?.platformCall(
        state.label,
        outcome,
        (performance.now() - started) / 1000,
      );
      endCallSpan(state, outcome);
    }
  }

  /**
   * A call on an identity the whole service shares (the bot token, the OAuth2 client) takes room
   * in the identity's rate, then waits for its bucket in a fair, bounded queue, both charged to the
   * request's caller; a user's own token is limited per user and goes straight to the transport.
   *
   * Room comes first: a call waiting for it (the fleet's window full) holds no bucket turn, so the
   * room that comes goes to the caller who asked least of the identity, never to whoever held the
   * turn (a made-up code ahead of a login on the token endpoint, whose bucket is one per
   * instance). Room a call does not use (refused by its queue, the budget or the breaker) is given
   * back. docs/request-costs.md, "Shared platform identities".
   */
  private async queued(
    call: PlatformCall,
    state: CallState,
    send: () => Promise<PlatformAnswer>,
  ): Promise<PlatformAnswer> {
    if (call.auth.kind === 'bearer') return send();
    const { label, observed, span } = state;
    const major = /^\/(?:guilds|channels|webhooks)\/([^/]+)/.exec(call.path)?.[1] ?? '';
    const key = `${call.auth.kind}${call.ownMember ? ':own' : ''}:${label}:${major}`;
    const identity = state.identity ?? BOT_IDENTITY;
    const queued = performance.now();
    state.room = await this.options.identities.acquire(identity, state.caller);
    try {
      return await this.queues.run({ key, label, identity, caller: state.caller, observed }, () => {
        span.setAttribute(
          SpanAttribute.platformQueueWaitMs,
          Math.round(performance.now() - queued),
        );
        return send();
      });
    } finally {
      state.room?.giveBack();
      state.room = null;
    }
  }

  private async sendWithRetries(call: PlatformCall, state: CallState): Promise<PlatformAnswer> {
    const request = this.request(call);
    const manager = call.ownMember ? this.botOwnMember : this.managerFor(call.auth);
    for (let failures = 1; ; failures++) {
      const outcome = await this.attempt(manager, request, state);
      if ('answer' in outcome) return outcome.answer;
      if (failures > this.options.retries) {
        throw new PlatformUnavailableError(
          `${state.label}: ${outcome.failure} after ${failures} attempts`,
        );
      }
      const delay = this.backoff(failures);
      this.logger.warn(
        { route: state.label, reason: outcome.failure, retry_in_ms: delay },
        'Chat platform call failed: retrying',
      );
      await sleep(delay);
    }
  }

  /** One pass through the transport: an answer, or the failure to retry after a delay. */
  private async attempt(
    manager: REST,
    request: InternalRequest,
    state: CallState,
  ): Promise<{ answer: PlatformAnswer } | { failure: string }> {
    try {
      const response = await manager.queueRequest(request);
      const text = await response.text();
      // Every route used answers 200 with a body; @discordjs/proxy answers an empty 200 when it
      // cannot reach the platform (it ends the answer, then fails).
      if (response.status === 200 && text === '' && this.viaProxy(manager.options.api)) {
        state.failure = 'network_error';
        return { failure: 'empty answer, as a REST proxy gives when it cannot reach the platform' };
      }
      return { answer: { status: response.status, body: parseBody(text) } };
    } catch (error) {
      if (error instanceof DiscordAPIError) {
        return { answer: { status: error.status, body: errorBody(error.rawError) } };
      }
      if (error instanceof HTTPError) {
        state.failure = 'server_error';
        return { failure: `status ${error.status}` };
      }
      if (error instanceof RateLimitError) {
        state.failure = 'rate_limited';
        throw new PlatformRateLimitedError(
          `${state.label}: ${state.refusal ?? 'rate limited'}`,
          state.refusedWaitMs ?? Math.max(error.timeToReset, error.retryAfter),
        );
      }
      // Refused here (an identity's rate, the invalid-request budget): never retried.
      if (error instanceof AppException) throw error;
      state.failure = isAbort(error) ? 'timeout' : 'network_error';
      return {
        failure: isAbort(error) ? `timed out after ${this.options.timeoutMs} ms` : 'network error',
      };
    }
  }

  private request(call: PlatformCall): InternalRequest {
    const headers: Record<string, string> = { Authorization: this.authorization(call.auth) };
    const request: InternalRequest = {
      method: METHODS[call.method],
      fullRoute: call.path,
      // Credentials travel as headers: the library would forget its token after any 401.
      auth: false,
      headers,
    };
    if (call.query) request.query = new URLSearchParams(call.query);
    if (call.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      request.body = new URLSearchParams(call.form).toString();
      request.passThroughBody = true;
    } else if (call.json !== undefined) {
      request.body = call.json;
    }
    return request;
  }

  private managerFor(auth: PlatformAuth): REST {
    switch (auth.kind) {
      case 'bot':
        return this.bot;
      case 'client':
        return this.app;
      case 'bearer':
        return this.manager(this.options.apiUrl, false);
    }
  }

  /** A manager; `longLived` ones sweep their idle buckets, short-lived ones need no timers. */
  private manager(api: string, longLived: boolean): REST {
    return new REST({
      api,
      version: '10',
      timeout: this.options.timeoutMs,
      retries: 0,
      // Waits as long as the platform asks, as before: no safety margin added to each wait.
      offset: 0,
      userAgentAppendix: USER_AGENT_APPENDIX,
      rejectOnRateLimit: (limit) => this.refusesToWait(limit),
      // The library declares this hook on the web's RequestInit but calls it with undici's, which
      // its default transport takes. The type checker sees two RequestInit types here; the linter,
      // resolving the web's from undici-types, sees one.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
      makeRequest: (url, init) => this.exchange(url, init as UndiciRequestInit, this.viaProxy(api)),
      ...(longLived ? {} : { hashSweepInterval: 0, handlerSweepInterval: 0 }),
    });
  }

  private authorization(auth: PlatformAuth): string {
    switch (auth.kind) {
      case 'bot':
        return `Bot ${this.options.botToken}`;
      case 'bearer':
        return `Bearer ${auth.token}`;
      case 'client': {
        const { clientId, clientSecret } = this.options;
        return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
      }
    }
  }

  /**
   * One request on the wire, for the library: refused locally once the invalid-request budget is
   * spent, counted against it by its answer, and read whole before the timeout ends.
   */
  private async exchange(
    url: string,
    init: UndiciRequestInit,
    viaProxy: boolean,
  ): Promise<ResponseLike> {
    const state = this.calls.getStore();
    // The call's first request uses the room taken before its turn; until it leaves, the room is
    // the call's to give back (`queued`) if the budget or the breaker refuses it.
    let place: WindowPlace | null = state?.room ?? null;
    await this.checkBudget(state?.label ?? url, state);
    const path: BreakerPath = viaProxy ? 'proxy' : 'platform';
    const admission = admit(this.breakers[path], performance.now(), this.breakerSettings);
    if (!admission.admitted) throw this.refusedWhileDown(state);
    this.breakers[path] = admission.state;
    const { probe } = admission;
    if (probe) this.options.metrics?.platformBreaker(path, 'half_open');
    if (state) state.room = null;
    if (!place && state?.identity) {
      try {
        place = await this.options.identities.acquire(state.identity, state.caller);
      } catch (error) {
        state.failure = 'refused_by_queue';
        this.settleBreaker(path, 'unknown', probe);
        throw error;
      }
    }
    const attempt = startAttemptSpan(url, init, state);
    let response: ResponseLike;
    let bytes: Buffer;
    try {
      response = await DefaultRestOptions.makeRequest(
        url,
        viaProxy ? withTraceContext(init, attempt) : init,
      );
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      attempt.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      attempt.end();
      // A network error or the timeout: the platform (or the REST proxy before it) is down.
      this.settleBreaker(path, 'down', probe);
      throw error;
    } finally {
      // The platform saw the call by now: its place leaves the window a window from now.
      place?.done();
    }
    this.settleBreaker(path, verdictOf(response.status, bytes.length, viaProxy), probe);
    attempt.setAttribute(SpanAttribute.httpResponseStatusCode, response.status);
    if (response.status >= 400) attempt.setStatus({ code: SpanStatusCode.ERROR });
    attempt.end();
    // A REST proxy's 429 is not counted: the proxy answers its own refusals (most of them, as it
    // keeps the token within its limits) and the platform's alike, so counting them would let
    // traffic the platform never saw spend the fleet's budget (docs/platform.md).
    const proxy429 = response.status === 429 && viaProxy;
    if (!proxy429 && countsAsInvalid(response.status, response.headers.get('X-RateLimit-Scope'))) {
      this.invalidAnswers.record();
    }
    if (state) observeBucket(state.observed, response.headers);
    const answer = bufferedResponse(response, bytes);
    if (response.status !== 429) return answer;
    if (state) state.rateLimits += 1;
    return { ...answer, headers: this.withRetryAfter(response.headers, state) };
  }

  /**
   * A call refused because the platform is known down: a 500 naming the platform, at once, with
   * `Retry-After`; never retried (it is an AppException).
   */
  private refusedWhileDown(state: CallState | undefined): PlatformUnavailableError {
    if (state) state.failure = 'refused_by_breaker';
    return new PlatformUnavailableError(
      `${state?.label ?? 'platform call'}: refused while the platform is down (a probe goes every ${this.breakerSettings.probeIntervalMs} ms)`,
    );
  }

  /** What an attempt showed of the platform, to the breaker; its opening and closing are logged. */
  private settleBreaker(path: BreakerPath, verdict: AttemptVerdict, probe: boolean): void {
    const before = this.breakers[path];
    const after = settle(before, verdict, probe, performance.now(), this.breakerSettings);
    this.breakers[path] = after;
    const via = path === 'proxy' ? ' (the bot through the REST proxy)' : '';
    if (before.kind === 'closed' && after.kind === 'open') {
      this.logger.error(
        { failures: this.breakerSettings.failureThreshold, path },
        `Chat platform down${via}: attempts in a row failed; refusing its calls at once, probing it every second`,
      );
    } else if (before.kind !== 'closed' && after.kind === 'closed') {
      this.logger.log({ path }, `Chat platform answers again${via}: its calls resume`);
    }
    this.options.metrics?.platformBreaker(path, after.kind);
  }

  /** Whether a manager with this API base sends its calls through the REST proxy. */
  private viaProxy(api: string | undefined): boolean {
    return Boolean(this.options.restProxyApiUrl) && api === this.options.restProxyApiUrl;
  }

  /**
   * A REST proxy answers a 429 with `Retry-After` only (no bucket headers, no body), and may say
   * `0`. The library would then retry at once: a 429 that names no wait (missing, zero or
   * unreadable) waits the retry backoff instead. It is still one of the call's bounded 429s.
   */
  private withRetryAfter(headers: AnswerHeaders, state: CallState | undefined): AnswerHeaders {
    if (Number(headers.get('Retry-After')) > 0) return headers;
    const withWait = new Headers(Object.fromEntries(headers));
    withWait.set('Retry-After', String(this.backoff(state?.rateLimits ?? 1) / 1000));
    return withWait;
  }

  /**
   * The library's question before every rate-limit wait (after a 429, or when a bucket or the
   * global limit is known to be exhausted): waiting is refused past this call's bound on 429s or
   * when the wait is longer than a request may be held.
   */
  private refusesToWait(limit: RateLimitData): boolean {
    const state = this.calls.getStore();
    if (!state) return false;
    const waitMs = Math.ceil(Math.max(limit.timeToReset, limit.retryAfter, limit.sublimitTimeout));
    if (state.rateLimits > state.rateLimit.retries) {
      state.refusal = `still rate limited after ${state.rateLimits} attempts`;
      state.refusedWaitMs = waitMs;
      return true;
    }
    if (waitMs > state.rateLimit.maxWaitMs) {
      state.refusal = `rate limited for ${waitMs} ms`;
      state.refusedWaitMs = waitMs;
      return true;
    }
    state.span.addEvent('rate limit wait', { [SpanAttribute.platformWaitMs]: waitMs });
    if (state.announced < state.rateLimits) {
      state.announced = state.rateLimits;
      this.logger.warn(
        { route: state.label, wait_ms: waitMs },
        'Chat platform rate limit: waiting',
      );
    }
    return false;
  }

  /**
   * Past the invalid-request budget, no call leaves: the platform would ban the address for an
   * hour. Calls resume as old answers leave the ten-minute window.
   */
  private async checkBudget(label: string, state: CallState | undefined): Promise<void> {
    if (!(await this.invalidAnswers.spent())) return;
    if (state) state.failure = 'refused_by_budget';
    const now = Date.now();
    if (now - this.budgetLoggedAt >= BUDGET_LOG_INTERVAL_MS) {
      this.budgetLoggedAt = now;
      this.logger.error(
        { invalid_answers: this.invalidAnswers.count(), limit: this.invalidAnswers.threshold() },
        'Chat platform invalid-request budget spent (401/403/429 answers in 10 minutes): refusing platform calls until it recovers, to avoid a ban',
      );
    }
    throw new InvalidRequestBudgetSpentError(label);
  }

  private backoff(failures: number): number {
    const ceiling = this.options.backoffMs * 2 ** (failures - 1);
    // Equal jitter: at least half the delay, so retries from many requests spread out.
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }
}

/**
 * What an answer says of its bucket (`X-RateLimit-Remaining`, `X-RateLimit-Reset-After` in
 * seconds), for the bucket's queue to wait out a spent bucket itself (src/platform/bucket-queue.ts).
 */
function observeBucket(observed: BucketObservation, headers: AnswerHeaders): void {
  const remaining = Number(headers.get('X-RateLimit-Remaining') ?? Number.NaN);
  const resetAfter = Number(headers.get('X-RateLimit-Reset-After') ?? Number.NaN);
  if (!Number.isFinite(remaining) || !Number.isFinite(resetAfter)) return;
  observed.remaining = remaining;
  observed.resetAfterMs = Math.max(0, resetAfter * 1000);
}

/** The shared identity a credential's calls take room in; none for a user's own token. */
function identityOf(auth: PlatformAuth): IdentityId | null {
  switch (auth.kind) {
    case 'bot':
      return BOT_IDENTITY;
    case 'client':
      return CLIENT_IDENTITY;
    case 'bearer':
      return null;
  }
}

/**
 * What an answer says of the platform, for the breaker: a 5xx, or a REST proxy's empty 200 (it could
 * not reach the platform), says it is down; a REST proxy's 429 may be its own refusal, which says
 * nothing of the platform; any other answer says it is up.
 */
function verdictOf(status: number, bodyBytes: number, viaProxy: boolean): AttemptVerdict {
  if (status >= 500) return 'down';
  if (viaProxy && status === 200 && bodyBytes === 0) return 'down';
  if (viaProxy && status === 429) return 'unknown';
  return 'up';
}

/** Where a call goes: to the platform, or (the bot's calls) through a REST proxy. */
type BreakerPath = 'platform' | 'proxy';

/** What an answer's status says of the call, for the metrics. */
function outcomeOf(status: number): PlatformOutcome {
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return status >= 400 ? 'client_error' : 'ok';
}

type UndiciRequestInit = Parameters<(typeof DefaultRestOptions)['makeRequest']>[1];
type AnswerHeaders = ResponseLike['headers'];

const METHODS: Readonly<Record<PlatformCall['method'], RequestMethod>> = {
  GET: RequestMethod.Get,
  POST: RequestMethod.Post,
  PUT: RequestMethod.Put,
};

/** An answer already read, served from memory to the library and to the caller. */
function bufferedResponse(response: ResponseLike, bytes: Buffer): ResponseLike {
  const text = bytes.toString('utf8');
  return {
    body: null,
    bodyUsed: false,
    headers: response.headers,
    ok: response.ok,
    status: response.status,
    statusText: response.statusText,
    arrayBuffer: () => Promise.resolve(new Uint8Array(bytes).buffer),
    text: () => Promise.resolve(text),
    // The library reads an error answer's code from this: an unreadable body has none.
    json: () => Promise.resolve(errorBody(parseBody(text)) ?? {}),
  };
}

function parseBody(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The JSON object of an error answer, or null for anything else (text, an array, nothing). */
function errorBody(body: unknown): object | null {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : null;
}

/** The library's timeout aborts the request; the error is named after the abort. */
function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** The call's outcome on its span, which ends with it. */
function endCallSpan(state: CallState, outcome: PlatformOutcome): void {
  const { span } = state;
  span.setAttribute(SpanAttribute.platformOutcome, outcome);
  span.setAttribute(SpanAttribute.platformAttempts, state.attempts);
  if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  span.end();
}

/** One request on the wire, a child of its call's span (a root one for a call outside `send`). */
function startAttemptSpan(
  url: string,
  init: UndiciRequestInit,
  state: CallState | undefined,
): Span {
  const method = init.method ?? 'GET';
  const parent = state ? trace.setSpan(context.active(), state.span) : context.active();
  const attempt = state ? ++state.attempts : 1;
  const route = state?.label.slice(state.label.indexOf(' ') + 1);
  return tracer.startSpan(
    `${method} ${route ?? 'platform'}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [SpanAttribute.httpRequestMethod]: method,
        // The route's template: the path's ids would tie users to guilds, the query may hold more.
        [SpanAttribute.urlFull]: templatedUrl(url, route),
        [SpanAttribute.platformAttempt]: attempt,
      },
    },
    parent,
  );
}

/**
 * The request with the attempt's W3C `traceparent`, for the REST proxy only: a trace continues into
 * the fleet's own proxy, while the platform itself is never sent the service's trace ids. With
 * tracing off nothing is added and `init` is returned as it is.
 */
function withTraceContext(init: UndiciRequestInit, span: Span): UndiciRequestInit {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  if (Object.keys(carrier).length === 0) return init;
  const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0]);
  for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
  return { ...init, headers };
}
