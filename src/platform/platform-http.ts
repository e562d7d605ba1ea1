import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { countsAsInvalid, InvalidRequestBudget } from 'src/platform/invalid-request-budget';
import { PlatformUnavailableError } from 'src/platform/platform.errors';
import type { PlatformAuth } from 'src/platform/platform.types';

export interface PlatformHttpOptions {
  /** The platform's REST base; requests go to `${apiUrl}/v10/…`. */
  apiUrl: string;
  botToken: string;
  clientId: string;
  clientSecret: string;
  /** Per attempt, body included. */
  timeoutMs: number;
  /** Further attempts after a timeout, a network error or a 5xx. */
  retries: number;
  /** Further attempts after a 429. */
  rateLimitRetries: number;
  /** A 429 asking for a longer wait fails at once instead of holding the request. */
  maxRateLimitWaitMs: number;
  /** First backoff delay; it doubles per attempt, with jitter. */
  backoffMs: number;
  /**
   * Invalid answers (401, 403, 429) in ten minutes at which calls stop, refused locally, before the
   * platform's own limit (10,000, then an hour's ban of the address) is reached. Default 9,000.
   */
  invalidRequestLimit?: number;
}

/**
 * Stops a thousand short of the platform's 10,000: room for answers already under way. Counted
 * per instance: instances behind one egress address share the platform's limit, so lower it when
 * running several.
 */
export const DEFAULT_INVALID_REQUEST_LIMIT = 9_000;
/** While calls are refused for the budget, the error is logged at most this often. */
const BUDGET_LOG_INTERVAL_MS = 60_000;

export interface PlatformCall {
  method: 'GET' | 'POST' | 'PUT';
  /** The route template, for rate-limit buckets, logs and errors: `/guilds/:guild_id`. */
  route: string;
  /** The concrete path: `/guilds/123`. */
  path: string;
  /** The route's top-level resource id: the platform keys its rate limits on it. */
  majorId?: string;
  auth: PlatformAuth;
  query?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
}

/** Any answer that is not a 429 or a 5xx: the caller decides what a 4xx means for its route. */
export interface PlatformAnswer {
  status: number;
  body: unknown;
}

/**
 * The transport to the platform: one request with a timeout, 429s waited out per `retry_after`
 * (a bounded number of times, with the bucket and the global limit respected by every later
 * request), timeouts, network errors and 5xx retried with exponential backoff a bounded number of
 * times, and then `PlatformUnavailableError`.
 */
export class PlatformHttp {
  private readonly logger = new Logger(PlatformHttp.name);
  /** When each rate-limit bucket may be used again (epoch ms). */
  private readonly bucketResumeAt = new Map<string, number>();
  private globalResumeAt = 0;
  private readonly invalidAnswers: InvalidRequestBudget;
  private budgetLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: PlatformHttpOptions) {
    this.invalidAnswers = new InvalidRequestBudget(
      options.invalidRequestLimit ?? DEFAULT_INVALID_REQUEST_LIMIT,
    );
  }

  async send(call: PlatformCall): Promise<PlatformAnswer> {
    const label = `${call.method} ${call.route}`;
    const bucket = `${call.method} ${call.route} ${call.majorId ?? ''}`;
    let failures = 0;
    let rateLimits = 0;
    for (;;) {
      this.checkBudget(label);
      await this.waitForBucket(bucket, label);
      const outcome = await this.attempt(call);
      if ('response' in outcome) {
        const { response } = outcome;
        if (countsAsInvalid(response.status, response.headers.get('X-RateLimit-Scope'))) {
          this.invalidAnswers.record();
        }
        this.recordBucket(bucket, response.headers);
        if (response.status === 429) {
          const waitMs = this.rateLimitWait(response, bucket);
          rateLimits += 1;
          if (rateLimits > this.options.rateLimitRetries) {
            throw new PlatformUnavailableError(
              `${label}: still rate limited after ${rateLimits} attempts`,
            );
          }
          if (waitMs > this.options.maxRateLimitWaitMs) {
            throw new PlatformUnavailableError(`${label}: rate limited for ${waitMs} ms`);
          }
          this.logger.warn({ route: label, wait_ms: waitMs }, 'Chat platform rate limit: waiting');
          continue;
        }
        if (response.status < 500) {
          return { status: response.status, body: parseBody(response.text) };
        }
      }
      const reason = 'response' in outcome ? `status ${outcome.response.status}` : outcome.error;
      failures += 1;
      if (failures > this.options.retries) {
        throw new PlatformUnavailableError(`${label}: ${reason} after ${failures} attempts`);
      }
      const delay = this.backoff(failures);
      this.logger.warn(
        { route: label, reason, retry_in_ms: delay },
        'Chat platform call failed: retrying',
      );
      await sleep(delay);
    }
  }

  private async attempt(
    call: PlatformCall,
  ): Promise<{ response: RawResponse } | { error: string }> {
    const url = new URL(`${this.options.apiUrl}/v10${call.path}`);
    for (const [key, value] of Object.entries(call.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = {
      'User-Agent': 'BotManagementService (https://github.com, 0.2.0)',
      ...this.authorization(call.auth),
    };
    let body: string | undefined;
    if (call.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(call.form).toString();
    } else if (call.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(call.json);
    }
    try {
      const response = await fetch(url, {
        method: call.method,
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      // Read now, inside the timeout, so a body that never ends counts as a timeout too.
      const text = await response.text();
      return { response: { status: response.status, headers: response.headers, text } };
    } catch (error) {
      // AbortSignal.timeout rejects with a DOMException named TimeoutError.
      const timedOut = (error as { name?: unknown } | null)?.name === 'TimeoutError';
      return { error: timedOut ? `timed out after ${this.options.timeoutMs} ms` : 'network error' };
    }
  }

  private authorization(auth: PlatformAuth): Record<string, string> {
    switch (auth.kind) {
      case 'bot':
        return { Authorization: `Bot ${this.options.botToken}` };
      case 'bearer':
        return { Authorization: `Bearer ${auth.token}` };
      case 'client': {
        const { clientId, clientSecret } = this.options;
        const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
        return { Authorization: `Basic ${basic}` };
      }
    }
  }

  /**
   * Past the invalid-request budget, no call leaves: the platform would ban the address for an
   * hour. Calls resume as old answers leave the ten-minute window.
   */
  private checkBudget(label: string): void {
    if (!this.invalidAnswers.spent()) return;
    const now = Date.now();
    if (now - this.budgetLoggedAt >= BUDGET_LOG_INTERVAL_MS) {
      this.budgetLoggedAt = now;
      this.logger.error(
        { invalid_answers: this.invalidAnswers.count(), limit: this.invalidAnswers.limit },
        'Chat platform invalid-request budget spent (401/403/429 answers in 10 minutes): refusing platform calls until it recovers, to avoid a ban',
      );
    }
    throw new PlatformUnavailableError(
      `${label}: refused locally, the invalid-request budget is spent`,
    );
  }

  private async waitForBucket(bucket: string, label: string): Promise<void> {
    const resumeAt = Math.max(this.globalResumeAt, this.bucketResumeAt.get(bucket) ?? 0);
    const waitMs = resumeAt - Date.now();
    if (waitMs <= 0) return;
    if (waitMs > this.options.maxRateLimitWaitMs) {
      throw new PlatformUnavailableError(`${label}: rate limited for another ${waitMs} ms`);
    }
    await sleep(waitMs);
  }

  /** Remembers an exhausted bucket so that later requests wait instead of drawing a 429. */
  private recordBucket(bucket: string, headers: Headers): void {
    const remaining = headers.get('X-RateLimit-Remaining');
    const resetAfter = Number(headers.get('X-RateLimit-Reset-After'));
    if (remaining === '0' && Number.isFinite(resetAfter) && resetAfter > 0) {
      this.bucketResumeAt.set(bucket, Date.now() + resetAfter * 1000);
    } else if (remaining !== null) {
      this.bucketResumeAt.delete(bucket);
    }
  }

  /** The wait a 429 asks for: the body's `retry_after` (seconds, fractional), else `Retry-After`. */
  private rateLimitWait(response: RawResponse, bucket: string): number {
    const body = parseBody(response.text) as { retry_after?: unknown; global?: unknown } | null;
    const seconds =
      typeof body?.retry_after === 'number'
        ? body.retry_after
        : Number(response.headers.get('Retry-After') ?? '1');
    const waitMs = Math.max(0, Math.ceil(seconds * 1000));
    const resumeAt = Date.now() + waitMs;
    if (body?.global === true || response.headers.get('X-RateLimit-Global') === 'true') {
      this.globalResumeAt = resumeAt;
    } else {
      this.bucketResumeAt.set(bucket, resumeAt);
    }
    return waitMs;
  }

  private backoff(failures: number): number {
    const ceiling = this.options.backoffMs * 2 ** (failures - 1);
    // Equal jitter: at least half the delay, so retries from many requests spread out.
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }
}

interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

function parseBody(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
