import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** Reports may be this far ahead of the service's clock (the bot's clock may run ahead a little). */
const MAX_AHEAD_MS = 5 * 60_000;
/**
 * Reports older than this are refused, and left guilds are forgotten after it: no report can then
 * bring back a guild left after it.
 */
export const MAX_REPORT_AGE_MS = 7 * 24 * 3_600_000;
const MAX_REPORT_AGE_TEXT = '7 days';
/** A date, a time and an offset: `2026-11-26T15:00:00.000Z`, `2026-11-26T16:00:00+01:00`. */
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A time the bot reported (its own clock), as both feeds accept it: with its offset, not far ahead
 * of `nowMs`, and not older than anything remembered (refused, or null with `tooOld: 'ignore'`).
 */
export function reportTime(field: string, value: string, nowMs: number): Date;
export function reportTime(
  field: string,
  value: string,
  nowMs: number,
  options: { tooOld: 'ignore' },
): Date | null;
/** `tooOld: 'accept'`: a time that only orders (a stream's start), however long ago. */
export function reportTime(
  field: string,
  value: string,
  nowMs: number,
  options: { tooOld: 'accept' },
): Date;
export function reportTime(
  field: string,
  value: string,
  nowMs: number,
  options?: { tooOld: 'ignore' | 'accept' },
): Date | null {
  const at = new Date(value);
  // A time without its offset would be read in the service's own time zone.
  if (Number.isNaN(at.getTime()) || !WITH_OFFSET.test(value)) {
    throw invalidReport(
      field,
      `${field} must be an ISO 8601 date and time with its offset (Z or ±hh:mm)`,
    );
  }
  if (at.getTime() > nowMs + MAX_AHEAD_MS) {
    throw invalidReport(field, `${field} is more than 5 minutes ahead of the service's clock`);
  }
  if (at.getTime() < nowMs - MAX_REPORT_AGE_MS && options?.tooOld !== 'accept') {
    if (options?.tooOld === 'ignore') return null;
    throw invalidReport(field, `${field} is more than ${MAX_REPORT_AGE_TEXT} old`);
  }
  return at;
}

/**
 * A reported time as the feeds order it: one ahead of the service's clock counts as the service's
 * "now", so that it cannot outrank what the bot reports next (a leave a minute later, a process
 * started after it).
 */
export function notAhead(at: Date, nowMs: number): Date {
  return at.getTime() > nowMs ? new Date(nowMs) : at;
}

/** The platform's rule: a guild's shard is its id's timestamp bits modulo the shard count. */
export function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** 400 `BadRequest` naming the report's field. */
export function invalidReport(field: string, message: string): AppException {
  return new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
    { field, message },
  ]);
}
