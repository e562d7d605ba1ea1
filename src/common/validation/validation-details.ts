import type { ValidationError } from 'class-validator';
import type { ErrorDetail } from 'src/common/errors/app.exception';

/** Constraints on a value's JSON type: when one fails, it is the problem to report. */
const TYPE_CONSTRAINTS: readonly string[] = [
  'isInt',
  'isNumber',
  'isString',
  'isBoolean',
  'isArray',
  'isObject',
];

/**
 * Flattens class-validator's nested errors into `{field, message}` entries with dotted field
 * paths, one per field: what a client must fix first. A missing field is "required" (in the DTO's
 * own words where it has an `@IsDefined` message), a value of the wrong JSON type gets the type's
 * message, and anything else the first rule it breaks. Needs the errors' `value`
 * (`validationError.value`, class-validator's default).
 */
export function toErrorDetails(errors: readonly ValidationError[], parentPath = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parentPath ? `${parentPath}.${error.property}` : error.property;
    const message = messageOf(error, field);
    const own = message === undefined ? [] : [{ field, message }];
    return [...own, ...toErrorDetails(error.children ?? [], field)];
  });
}

function messageOf(error: ValidationError, field: string): string | undefined {
  const failed = Object.entries(error.constraints ?? {});
  if (failed.length === 0) return undefined;
  const named = (names: readonly string[]): string | undefined =>
    failed.find(([name]) => names.includes(name))?.[1];
  if (error.value === undefined) return named(['isDefined']) ?? `${field} is required`;
  return named(TYPE_CONSTRAINTS) ?? failed[0][1];
}

/**
 * One line summarising the details, used as the error's `message`: the heading, the first problem
 * and how many more there are.
 */
export function summariseDetails(
  details: readonly ErrorDetail[],
  heading = 'Invalid request',
): string {
  if (details.length === 0) return 'The request is invalid';
  const [first] = details;
  const more =
    details.length > 1 ? ` (and ${details.length - 1} more problem(s), see details)` : '';
  return `${heading}: ${first.message}${more}`;
}
