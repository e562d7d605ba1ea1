import { ValidateBy, type ValidationOptions } from 'class-validator';

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):?(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The server's `date-time` format (the published template says `format: date-time`): an RFC 3339
 * date-time that is also a real instant for JavaScript and PostgreSQL. JSON Schema allows a leap
 * second (`23:59:60`), which neither can store, and ajv-formats an offset of hours only, which
 * `Date` cannot read; both are refused. Years 0000–9999 with any offset lie well inside the range
 * of `timestamptz` (4713 BC to 294276 AD) and of `Date`.
 */
export function isStorableTimestamp(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHour = 0, offsetMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS[month - 1];
  if (month < 1 || month > 12 || day < 1 || day > days) return false;
  if (hour > 23 || minute > 59 || second > 59 || offsetHour > 23 || offsetMinute > 59) return false;
  return Number.isFinite(Date.parse(value));
}

/**
 * A query or body field holding an instant (`isStorableTimestamp`): RFC 3339 with its offset.
 * Refused with a message naming the field and showing the form expected.
 */
export function IsDateTimeText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTimeText',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isStorableTimestamp(value),
        defaultMessage: () =>
          '$property must be an ISO 8601 date-time with its offset, e.g. 2026-11-01T00:00:00Z',
      },
    },
    options,
  );
}
