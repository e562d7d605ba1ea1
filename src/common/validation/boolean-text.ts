import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * A boolean as a query string carries it: exactly `true` or `false`. (class-validator's `IsIn`
 * would do, but the OpenAPI generator publishes it as a string enum, and the parameter is a
 * boolean to clients.)
 */
export function IsBooleanText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBooleanText',
      validator: {
        validate: (value: unknown) => value === 'true' || value === 'false',
        defaultMessage: () => '$property must be true or false',
      },
    },
    options,
  );
}
