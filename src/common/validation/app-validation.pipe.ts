import { Injectable, ValidationPipe } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { summariseDetails, toErrorDetails } from 'src/common/validation/validation-details';

/**
 * The global pipe (registered as `APP_PIPE`): unknown fields are refused rather than silently
 * dropped, payloads are transformed into their DTO classes, and failures become `BadRequest` with
 * one `details` entry per problem.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      // One message per field: the first rule it breaks.
      stopAtFirstError: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => {
        const details = toErrorDetails(errors);
        return new AppException(ErrorCode.BadRequest, summariseDetails(details), details);
      },
    });
  }

  /**
   * Single path and query values stay the strings they arrived as: each route parses its own with
   * a pipe that refuses what `Number()` would quietly accept (`""`, `" 1"`, `1e3`, `007`).
   */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }
}
