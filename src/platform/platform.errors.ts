import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { DependencyUnavailableError } from 'src/common/errors/outage';

/**
 * The platform could not be reached or kept failing (timeouts, network errors, 5xx, rate limits
 * beyond what may be waited out, a rejected bot token). Rendered as 500 `InternalError` naming the
 * platform, with `Retry-After` (docs/errors.md, "Outages"); `detail` goes to the log only, never
 * to a client.
 */
export class PlatformUnavailableError extends DependencyUnavailableError {
  constructor(detail: string) {
    super('platform', detail);
    this.name = 'PlatformUnavailableError';
  }
}

/** The budget counts in 10 s slots: the soonest it can recover is when the oldest slot leaves. */
const INVALID_BUDGET_RETRY_AFTER_SECONDS = 10;

/**
 * The fleet's invalid-request budget is spent (docs/platform.md): this service's own limit, kept so
 * that the platform does not ban its address, and not a failure. 429 `RateLimited` naming the
 * budget, with `Retry-After`: answers leave its ten-minute window a slot (10 s) at a time.
 */
export class InvalidRequestBudgetSpentError extends AppException {
  constructor(
    readonly route: string,
    readonly retryAfterSeconds: number = INVALID_BUDGET_RETRY_AFTER_SECONDS,
  ) {
    super(
      ErrorCode.RateLimited,
      `This service's budget of invalid requests to the chat platform (401, 403 and 429 answers in 10 minutes, shared by every user) is spent, so no platform call leaves until it recovers; retry in ${retryAfterSeconds} seconds`,
    );
    this.name = 'InvalidRequestBudgetSpentError';
    this.headers = { 'Retry-After': retryAfterSeconds };
  }
}

/** The platform refused a user's OAuth2 bearer token (expired or revoked grant). */
export class PlatformUnauthorizedError extends Error {
  constructor() {
    super('The chat platform refused the user token');
    this.name = 'PlatformUnauthorizedError';
  }
}

/**
 * An OAuth2 token-endpoint error (RFC 6749 §5.2): `invalid_grant` means the code or refresh token
 * is dead (restart the login), `invalid_client` a configuration problem.
 */
export class OAuth2GrantError extends Error {
  constructor(
    readonly error: string,
    readonly description?: string,
  ) {
    super(`OAuth2 token endpoint answered ${error}`);
    this.name = 'OAuth2GrantError';
  }
}

/** An answer of the platform this service does not expect for the call (a 4xx other than those handled). */
export class PlatformRequestError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    readonly platformCode: number | undefined,
  ) {
    super(
      `${route} answered ${status}${platformCode === undefined ? '' : ` (code ${platformCode})`}`,
    );
    this.name = 'PlatformRequestError';
  }
}

/**
 * A 200 answer this service cannot use (src/platform/platform-answers.ts): `field` names what is
 * wrong in it. Handled as any unexpected answer of the platform (a 500 with the detail in the log).
 */
export class PlatformAnswerError extends PlatformRequestError {
  constructor(
    route: string,
    readonly field: string,
    problem: string,
  ) {
    super(route, 200, undefined);
    this.message = `${route} answered 200 with an unusable ${field}: ${problem}`;
    this.name = 'PlatformAnswerError';
  }
}
