import { type PipeTransform } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** A platform id: a decimal unsigned 64-bit integer without leading zeros. */
export const SNOWFLAKE_PATTERN = /^(0|[1-9]\d{0,19})$/;
const MAX_SNOWFLAKE = (1n << 64n) - 1n;

export function isSnowflake(value: unknown): value is string {
  return (
    typeof value === 'string' && SNOWFLAKE_PATTERN.test(value) && BigInt(value) <= MAX_SNOWFLAKE
  );
}

/** Validates a snowflake path parameter: anything else is 400 `BadRequest` naming the parameter. */
export class ParseSnowflakePipe implements PipeTransform<unknown, string> {
  constructor(private readonly name: string) {}

  transform(value: unknown): string {
    if (isSnowflake(value)) return value;
    const message = `${this.name} must be a snowflake (a decimal id of at most 20 digits)`;
    throw new AppException(ErrorCode.BadRequest, message, [{ field: this.name, message }]);
  }
}
