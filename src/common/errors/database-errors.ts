import { QueryFailedError } from 'typeorm';

/**
 * PostgreSQL's integrity-constraint SQLSTATEs that a request can cause (a race past a pre-check,
 * or a value validation let through), with what the API's user is told: never the SQL, the
 * constraint or the values.
 */
const CONSTRAINT_MESSAGES: Readonly<Record<string, string>> = {
  '23505': 'This conflicts with an entry that already exists; read it and update it instead',
  '23503': 'This refers to something that does not exist, or removes something still in use',
  '23514': 'A value is outside what is allowed',
};

/** Which constraint refused a statement: for the log, never for the response. */
export interface ConstraintViolation {
  sqlState: string;
  constraint?: string;
  table?: string;
  /** What the API's user is told. */
  message: string;
}

/** The SQLSTATE of a statement the database refused (same shape on PostgreSQL and PGlite). */
function sqlStateOf(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A refused statement that broke an integrity constraint, or null for anything else. */
export function constraintViolationOf(error: unknown): ConstraintViolation | null {
  const sqlState = sqlStateOf(error);
  const message = sqlState === undefined ? undefined : CONSTRAINT_MESSAGES[sqlState];
  if (sqlState === undefined || message === undefined) return null;
  const driverError = (error as QueryFailedError).driverError as {
    constraint?: unknown;
    table?: unknown;
  };
  return {
    sqlState,
    message,
    ...(typeof driverError.constraint === 'string' && { constraint: driverError.constraint }),
    ...(typeof driverError.table === 'string' && { table: driverError.table }),
  };
}

/** A unique violation (SQLSTATE 23505): a concurrent insert of the same key won the race. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}

/** A lock not granted within `lock_timeout` (SQLSTATE 55P03, `lock_not_available`). */
export function isLockTimeout(error: unknown): boolean {
  return sqlStateOf(error) === '55P03';
}
