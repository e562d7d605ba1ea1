import { isSnowflake, notASnowflake } from 'src/common/validation/snowflake';

/** A problem with a command's input or outcome: printed as one line, exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requireSnowflake(value: string | undefined, name: string): string {
  if (!isSnowflake(value)) throw new CliError(notASnowflake(name));
  return value;
}

export function requireUuid(value: string | undefined, name: string): string {
  if (!value || !UUID.test(value)) throw new CliError(`${name} must be a UUID`);
  return value;
}

export function requirePositiveInteger(value: string, name: string): number {
  if (!/^\d+$/.test(value)) throw new CliError(`${name} must be a whole number of seconds`);
  return Number(value);
}
