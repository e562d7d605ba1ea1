import type { ValidationError } from 'class-validator';
import type { ErrorDetail } from 'src/common/errors/app.exception';

/** Flattens class-validator's nested errors into `{field, message}` entries with dotted field paths. */
export function toErrorDetails(errors: readonly ValidationError[], parentPath = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parentPath ? `${parentPath}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...toErrorDetails(error.children ?? [], field)];
  });
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
