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
