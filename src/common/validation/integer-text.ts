import type { PipeTransform } from '@nestjs/common';
import { ValidateBy, type ValidationOptions } from 'class-validator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

const WHOLE_NUMBER = /^(0|[1-9][0-9]{0,15})$/;

/**
 * A whole number as a query string carries it: decimal digits without sign, spaces or leading
 * zeros, from `min` to `max`. (Query values stay strings; `Number()` would accept `""`, `1e3`.)
 */
export function IsIntegerText(
  min: number,
  max: number,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIntegerText',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' &&
          WHOLE_NUMBER.test(value) &&
          Number(value) >= min &&
          Number(value) <= max,
        defaultMessage: () => `$property must be a whole number from ${min} to ${max}`,
      },
    },
    options,
  );
}

/** A whole-number path parameter from `min` to `max`, refused (400, naming it) otherwise. */
export class ParseIntegerPipe implements PipeTransform<unknown, number> {
  constructor(
    private readonly name: string,
    private readonly min: number,
    private readonly max: number,
  ) {}

  transform(value: unknown): number {
    if (typeof value === 'string' && WHOLE_NUMBER.test(value)) {
      const number = Number(value);
      if (number >= this.min && number <= this.max) return number;
    }
    const message = `${this.name} must be a whole number from ${this.min} to ${this.max}`;
    throw new AppException(ErrorCode.BadRequest, message, [{ field: this.name, message }]);
  }
}
