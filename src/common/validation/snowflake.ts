import { ValidateBy, type ValidationOptions } from 'class-validator';
import { type PipeTransform } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/**
 * The decimal integers from 0 to `max` without leading zeros, as a regular expression source (no
 * anchors): every shorter number, then per digit of `max` the numbers that share its prefix and
 * have a smaller digit there, then `max` itself. A pattern can then carry the bound wherever only
 * a pattern can be given (JSON Schema, class-validator).
 */
export function decimalAtMostSource(max: bigint): string {
  const digits = max.toString();
  const alternatives = ['0'];
  if (digits.length > 1) alternatives.push(`[1-9][0-9]{0,${digits.length - 2}}`);
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const lowest = i === 0 ? 1 : 0;
    if (digit <= lowest) continue;
    const range = digit - 1 === lowest ? `${lowest}` : `[${lowest}-${digit - 1}]`;
    const rest = digits.length - i - 1;
    alternatives.push(`${digits.slice(0, i)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  if (max > 0n) alternatives.push(digits);
  return `(?:${alternatives.join('|')})`;
}

const MAX_SNOWFLAKE = (1n << 64n) - 1n;

/** A platform id: a decimal unsigned 64-bit integer without leading zeros, bound included. */
export const SNOWFLAKE_PATTERN = new RegExp(`^${decimalAtMostSource(MAX_SNOWFLAKE)}$`);

/** Snowflakes compared as numbers (BigInt): "9" comes before "10". */
export function compareSnowflakes(a: string, b: string): number {
  const diff = BigInt(a) - BigInt(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}

export function isSnowflake(value: unknown): value is string {
  return typeof value === 'string' && SNOWFLAKE_PATTERN.test(value);
}

/** What is said of a value that is not a snowflake, wherever one is refused. */
export function notASnowflake(name: string): string {
  return `${name} must be a snowflake (a decimal id of at most 20 digits)`;
}

/** Validates a snowflake path parameter: anything else is 400 `BadRequest` naming the parameter. */
export class ParseSnowflakePipe implements PipeTransform<unknown, string> {
  constructor(private readonly name: string) {}

  transform(value: unknown): string {
    if (isSnowflake(value)) return value;
    const message = notASnowflake(this.name);
    throw new AppException(ErrorCode.BadRequest, message, [{ field: this.name, message }]);
  }
}

/** A DTO field holding a snowflake; anything else is refused with `notASnowflake`'s message. */
export function IsSnowflake(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSnowflake',
      validator: {
        validate: isSnowflake,
        defaultMessage: () => notASnowflake('$property'),
      },
    },
    options,
  );
}
