/** The two kinds of session: a dashboard login (OAuth2) and an API token for scripts and the bot. */
export type SessionType = 'login' | 'api';
export const SESSION_TYPES: readonly SessionType[] = ['login', 'api'];

/**
 * What an API token is limited to (null: no limit of that kind): the guilds it may act in, and the
 * permission strings it may use, always within its user's own permissions at the time of a call.
 */
export interface TokenScope {
  readonly guilds: readonly string[] | null;
  readonly permissions: readonly string[] | null;
}

/** The session behind an authenticated request, as the guard hands it to handlers. */
export interface AuthenticatedSession {
  readonly id: string;
  readonly userId: string;
  readonly type: SessionType;
  readonly name: string | null;
  readonly state: 'active' | 'banned';
  readonly userState: 'normal' | 'banned';
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** API tokens only; null for a token without a scope and for login sessions. */
  readonly scope: TokenScope | null;
}
