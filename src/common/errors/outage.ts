import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/**
 * `Retry-After` of an answer refused because a dependency is down, in seconds: about how often an
 * instance tries the dependency again (the database once a second), with room for it to come back.
 */
export const OUTAGE_RETRY_AFTER_S = 5;

/** What an outage answer names as down. */
export type Dependency = 'database' | 'platform';

/** What an outage answer says, by what is down and the code it is sent with. */
const MESSAGES: Readonly<
  Record<Dependency, Record<ErrorCode.InternalError | ErrorCode.InternalAuthError, string>>
> = {
  database: {
    [ErrorCode.InternalError]: 'The database is unavailable; try again later',
    [ErrorCode.InternalAuthError]:
      'The authentication system is unavailable (the database does not answer); try again later',
  },
  platform: {
    [ErrorCode.InternalError]: 'The chat platform is unavailable; try again later',
    [ErrorCode.InternalAuthError]:
      'The authentication system is unavailable (the chat platform does not answer); try again later',
  },
};

/**
 * A request refused because a dependency is down or did not answer within its bound: 500 with the
 * spec's code (`InternalError`, or `InternalAuthError` while authenticating), a message naming
 * what is down, and `Retry-After` (docs/errors.md, "Outages"). `detail` goes to the log only.
 */
export class DependencyUnavailableError extends AppException {
  constructor(
    readonly dependency: Dependency,
    readonly detail: string,
    code: ErrorCode.InternalError | ErrorCode.InternalAuthError = ErrorCode.InternalError,
  ) {
    super(code, outageMessage(dependency, code));
    this.name = 'DependencyUnavailableError';
    this.headers = { 'Retry-After': OUTAGE_RETRY_AFTER_S };
  }
}

export const UNCONFIRMED_COMMIT_MESSAGE =
  'The database did not confirm the change, which may have been applied; read it before trying again';

/**
 * The database did not answer a transaction's COMMIT within its bound: the change may have been
 * committed (the server can have committed it and only its answer been lost), so unlike any other
 * outage answer this one does not say the change was refused. A 500 `InternalError` with
 * `Retry-After`, whose message tells the caller to read before trying again (docs/errors.md,
 * "Outages").
 */
export class UnconfirmedCommitError extends DependencyUnavailableError {
  constructor(detail: string) {
    super('database', detail);
    this.name = 'UnconfirmedCommitError';
    this.message = UNCONFIRMED_COMMIT_MESSAGE;
  }
}

/**
 * The `DependencyUnavailableError` in `error` (itself, or the driver error or cause TypeORM and pg
 * wrap it in), if any: it carries its own message and headers.
 */
export function dependencyErrorIn(error: unknown): DependencyUnavailableError | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    if (current instanceof DependencyUnavailableError) return current;
    const { driverError, cause } = current as { driverError?: unknown; cause?: unknown };
    current = driverError ?? cause;
  }
  return undefined;
}

export function outageMessage(
  dependency: Dependency,
  code: ErrorCode.InternalError | ErrorCode.InternalAuthError = ErrorCode.InternalError,
): string {
  return MESSAGES[dependency][code];
}

/**
 * Driver messages and codes that say the database cannot be reached or did not answer in time,
 * as opposed to a statement it refused. pg and pg-pool name these in words, without a code.
 */
const OUTAGE_MESSAGES = [
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'the database did not answer',
];
/** Node's socket errors. */
const OUTAGE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or not yet there: class 08 (connection exception),
 * 57P01 `admin_shutdown`, 57P02 `crash_shutdown`, 57P03 `cannot_connect_now`.
 */
function isOutageSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
}

/**
 * Whether `error` (a driver error, or TypeORM's `QueryFailedError` around one) says that the
 * database is down or stalled. A statement the server refused, its own `statement_timeout`
 * included, is not an outage: the server answered.
 */
export function isDatabaseOutage(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    if (current instanceof DependencyUnavailableError) return current.dependency === 'database';
    const { code, message, driverError, cause } = current as {
      code?: unknown;
      message?: unknown;
      driverError?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string' && (OUTAGE_ERRNOS.has(code) || isOutageSqlState(code))) {
      return true;
    }
    if (typeof message === 'string' && OUTAGE_MESSAGES.some((text) => message.includes(text))) {
      return true;
    }
    current = driverError ?? cause;
  }
  return false;
}

/**
 * What authentication answers when it could not read the session store: `InternalAuthError`,
 * naming the database when it is what is down.
 */
export function authenticationUnavailable(cause: unknown): AppException {
  if (isDatabaseOutage(cause)) {
    return new DependencyUnavailableError(
      'database',
      String((cause as Error | undefined)?.message),
      ErrorCode.InternalAuthError,
    );
  }
  return new AppException(
    ErrorCode.InternalAuthError,
    'The authentication system is unavailable; try again later',
  );
}
