import { HttpStatus } from '@nestjs/common';
import { ALTERNATE_STATUSES, ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';

/** One failed field of a request, listed in a validation error's `details`. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * The one exception the application throws on purpose. The global filter renders it as
 * `{message, code, details?}` with the status that belongs to the code.
 */
export class AppException extends Error {
  readonly status: HttpStatus;
  /** Response headers that belong to the error (a refusal's `Retry-After`), set by the filter. */
  headers?: Readonly<Record<string, string | number>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    status?: HttpStatus,
  ) {
    super(message);
    this.name = 'AppException';
    this.status = AppException.statusFor(code, status);
  }

  private static statusFor(code: ErrorCode, requested: HttpStatus | undefined): HttpStatus {
    if (requested === undefined || requested === ERROR_STATUS[code]) return ERROR_STATUS[code];
    if (ALTERNATE_STATUSES[code]?.includes(requested)) return requested;
    throw new Error(`Status ${requested} is not allowed for error code ${code}`);
  }
}
