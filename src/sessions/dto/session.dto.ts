import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { NULL_SCHEMA } from 'src/common/openapi/null-schema';
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

/** An API token's scope as stored: each part null when the token has no limit of that kind. */
export class SessionScopeDto {
  /** @example ["1100000000000000100"] */
  @ApiProperty({ type: [String], nullable: true })
  guilds!: string[] | null;

  /** @example ["guildroles.view", "protection.*"] */
  @ApiProperty({ type: [String], nullable: true })
  permissions!: string[] | null;
}

@ApiExtraModels(SessionScopeDto)
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

  /** When the session was last used, ISO 8601 (recorded at most once a minute); null if never. */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-24T10:15:00.000Z' })
  last_used_at!: string | null;

  // As `user` below: null is the second alternative of a `oneOf`, through an alias.
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(SessionScopeDto) }, NULL_SCHEMA],
    description: "An API token's scope; null for a token without one and for login sessions.",
  })
  scope!: ScopeOrNone;
}

/** A token's scope; none for the others. */
type ScopeOrNone = SessionScopeDto | null;

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

/** A login's profile; none for an API token. */
type ProfileOrNone = LoginUserDto | null;

/** A new session: the only response that ever carries its token. */
@ApiExtraModels(LoginUserDto)
export class SessionCreatedDto {
  user_id!: string;

  /** The secret token: store it now, it is not shown again. */
  token!: string;

  session_id!: string;

  /** When the session expires, ISO 8601. */
  expiry!: string;

  /** The user's profile for a login; null for an API token. */
  // OpenAPI 3.0 has no null type, and `nullable` does not apply to a `$ref`: null is one of two
  // alternatives, spelled the way 3.0 allows. (Through an alias, the generator leaves the type
  // alone instead of adding `nullable` beside the `oneOf`.)
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(LoginUserDto) }, NULL_SCHEMA],
    description: "The user's profile for a login; null for an API token.",
  })
  user!: ProfileOrNone;
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
