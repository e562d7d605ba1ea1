import { HttpStatus } from '@nestjs/common';

/**
 * The API's error codes: the spec's table plus `RateLimited` and `VersionConflict`. They are part of
 * the public contract.
 */
export enum ErrorCode {
  BadRequest = 'BadRequest',
  NoAuthToken = 'NoAuthToken',
  InvalidToken = 'InvalidToken',
  ApiBanned = 'ApiBanned',
  Restricted = 'Restricted',
  NotFound = 'NotFound',
  /** An Update or Delete named a row version that is no longer current (someone changed the row). */
  VersionConflict = 'VersionConflict',
  RateLimited = 'RateLimited',
  InternalAuthError = 'InternalAuthError',
  InternalError = 'InternalError',
}

/**
 * The HTTP status of every code. Typed as a total record so that adding a code without its status
 * does not compile.
 */
export const ERROR_STATUS: Readonly<Record<ErrorCode, HttpStatus>> = {
  [ErrorCode.BadRequest]: HttpStatus.BAD_REQUEST,
  [ErrorCode.NoAuthToken]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.InvalidToken]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.ApiBanned]: HttpStatus.FORBIDDEN,
  [ErrorCode.Restricted]: HttpStatus.FORBIDDEN,
  [ErrorCode.NotFound]: HttpStatus.NOT_FOUND,
  [ErrorCode.VersionConflict]: HttpStatus.CONFLICT,
  [ErrorCode.RateLimited]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.InternalAuthError]: HttpStatus.INTERNAL_SERVER_ERROR,
  [ErrorCode.InternalError]: HttpStatus.INTERNAL_SERVER_ERROR,
};

/** Statuses a code may be sent with besides its own (an oversized body: 413, docs/errors.md). */
export const ALTERNATE_STATUSES: Readonly<Partial<Record<ErrorCode, readonly HttpStatus[]>>> = {
  [ErrorCode.BadRequest]: [HttpStatus.PAYLOAD_TOO_LARGE],
};
