import { HttpException, HttpStatus } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { constraintViolationOf } from 'src/common/errors/database-errors';
import { ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';
import type { ErrorDetailDto } from 'src/common/errors/error-response.dto';
import {
  dependencyErrorIn,
  isDatabaseOutage,
  outageMessage,
  OUTAGE_RETRY_AFTER_S,
} from 'src/common/errors/outage';

export interface ErrorBody {
  message: string;
  code: ErrorCode;
  details?: ErrorDetailDto[];
  error_id?: string;
}

/** An error ready to send. `unexpected` errors are logged with their stack under the body's `error_id`. */
export interface RenderedError {
  status: HttpStatus;
  body: ErrorBody;
  unexpected: boolean;
  /** A database constraint refused the request: logged as a warning (which one, never values). */
  constraint?: { sqlState: string; constraint?: string; table?: string };
  /** Response headers that belong to the error (`Retry-After`). */
  headers?: Readonly<Record<string, string | number>>;
}

const INTERNAL_MESSAGE = 'An unexpected error occurred; quote the error_id when reporting it';

/** Messages for the statuses that Nest and Fastify raise themselves, written for the API's user. */
const FRAMEWORK_MESSAGES: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.PAYLOAD_TOO_LARGE]:
    'Request body is too large (the limit is 100 KiB; 1 MiB for guild-state reports)',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]:
    'Unsupported Content-Type: send the body as application/json',
  [HttpStatus.METHOD_NOT_ALLOWED]: 'Method not allowed on this route',
};

/**
 * Turns anything thrown while handling a request into the one error shape. Pure, so every mapping
 * is unit-tested; the global filter only sends and logs what this returns.
 */
export function renderError(exception: unknown, errorId: string): RenderedError {
  if (exception instanceof AppException) {
    return fromAppException(exception, errorId);
  }
  if (exception instanceof HttpException) {
    return fromHttpException(exception, errorId);
  }
  // An outage answer of the service's own (a spent budget, an unconfirmed commit), which TypeORM
  // may have wrapped: it says what happened, not only that the database is down.
  const dependency = dependencyErrorIn(exception);
  if (dependency) return fromAppException(dependency, errorId);
  if (isDatabaseOutage(exception)) {
    // The driver's own words stay in the log; the client learns what is down and when to retry.
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      body: {
        message: outageMessage('database'),
        code: ErrorCode.InternalError,
        error_id: errorId,
      },
      unexpected: true,
      headers: { 'Retry-After': OUTAGE_RETRY_AFTER_S },
    };
  }
  const violation = constraintViolationOf(exception);
  if (violation) {
    const { message, ...constraint } = violation;
    return {
      status: HttpStatus.BAD_REQUEST,
      body: { message, code: ErrorCode.BadRequest },
      unexpected: false,
      constraint,
    };
  }
  return internalError(errorId);
}

function fromAppException(exception: AppException, errorId: string): RenderedError {
  const headers = exception.headers && { headers: exception.headers };
  if (exception.status >= HttpStatus.INTERNAL_SERVER_ERROR) {
    return {
      status: exception.status,
      body: { message: exception.message, code: exception.code, error_id: errorId },
      unexpected: true,
      ...headers,
    };
  }
  const body: ErrorBody = { message: exception.message, code: exception.code };
  if (exception.details?.length) body.details = [...exception.details];
  return { status: exception.status, body, unexpected: false, ...headers };
}

function fromHttpException(exception: HttpException, errorId: string): RenderedError {
  const status = exception.getStatus() as HttpStatus;
  if (status >= HttpStatus.INTERNAL_SERVER_ERROR) return internalError(errorId);
  const code = codeForStatus(status);
  // 413 keeps its status (docs/errors.md); every other status is the code's own.
  const sentStatus = status === HttpStatus.PAYLOAD_TOO_LARGE ? status : ERROR_STATUS[code];
  const message = FRAMEWORK_MESSAGES[status] ?? messageOf(exception);
  return { status: sentStatus, body: { message, code }, unexpected: false };
}

function codeForStatus(status: HttpStatus): ErrorCode {
  switch (status) {
    case HttpStatus.UNAUTHORIZED:
      return ErrorCode.InvalidToken;
    case HttpStatus.FORBIDDEN:
      return ErrorCode.Restricted;
    case HttpStatus.NOT_FOUND:
    case HttpStatus.METHOD_NOT_ALLOWED:
      return ErrorCode.NotFound;
    case HttpStatus.TOO_MANY_REQUESTS:
      return ErrorCode.RateLimited;
    default:
      return ErrorCode.BadRequest;
  }
}

/** Nest's exceptions carry either a string or `{message: string | string[]}`. */
function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  if (typeof response === 'object' && response !== null && 'message' in response) {
    const { message } = response;
    if (typeof message === 'string') return message;
    if (Array.isArray(message)) return message.map(String).join('; ');
  }
  return exception.message;
}

function internalError(errorId: string): RenderedError {
  return {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    body: { message: INTERNAL_MESSAGE, code: ErrorCode.InternalError, error_id: errorId },
    unexpected: true,
  };
}
