import { ApiProperty } from '@nestjs/swagger';
import type { SessionType } from 'src/common/auth/authenticated-session';
import type { IssuedSession } from 'src/sessions/sessions.service';

/** The session of the request (`GET /sessions/@me`). */
export class CurrentSessionDto {
  /** @example "0f8fad5b-d9cb-469f-a165-70867728950e" */
  id!: string;

  /** @example "1100000000000000010" */
  user_id!: string;

  @ApiProperty({ enum: ['login', 'api'] })
  type!: SessionType;

  /** The API token's name; null for login sessions. */
  @ApiProperty({ type: String, nullable: true })
  name!: string | null;

  /** The user's state. */
  @ApiProperty({ enum: ['normal', 'banned'] })
  state!: 'normal' | 'banned';

  /** ISO 8601. */
  created_at!: string;

  /** When the session expires, ISO 8601. */
  expiry!: string;
}

export class SessionSummaryDto {
  id!: string;

  @ApiProperty({ type: String, nullable: true })
  name!: string | null;

  user_id!: string;

  @ApiProperty({ enum: ['login', 'api'] })
  type!: SessionType;

  /** ISO 8601. */
  created_at!: string;

  /** ISO 8601. */
  expiry!: string;

  /** Whether this is the session making the request. */
  current!: boolean;
}

export class SessionListDto {
  /** Live sessions, newest first. Tokens are never listed. */
  sessions!: SessionSummaryDto[];
}

/** The profile returned with a login. */
export class LoginUserDto {
  id!: string;

  username!: string;

  @ApiProperty({ type: String, nullable: true })
  global_name!: string | null;

  /** Avatar hash, or null. */
  @ApiProperty({ type: String, nullable: true })
  avatar!: string | null;
}

/** A new session: the only response that ever carries its token. */
export class SessionCreatedDto {
  user_id!: string;

  /** The secret token: store it now, it is not shown again. */
  token!: string;

  session_id!: string;

  /** When the session expires, ISO 8601. */
  expiry!: string;

  /** The user's profile for a login; null for an API token. */
  @ApiProperty({ type: LoginUserDto, nullable: true })
  user!: LoginUserDto | null;
}

/** The answer to a new session (`POST /oauth2` with the user's profile, `POST /sessions` without). */
export function sessionCreatedDto(
  issued: IssuedSession,
  user: LoginUserDto | null,
): SessionCreatedDto {
  return {
    user_id: issued.session.userId,
    token: issued.token,
    session_id: issued.session.id,
    expiry: issued.session.expiresAt.toISOString(),
    user,
  };
}
