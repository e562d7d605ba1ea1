/** The two kinds of session: a dashboard login (OAuth2) and an API token for scripts and the bot. */
export type SessionType = 'login' | 'api';
export const SESSION_TYPES: readonly SessionType[] = ['login', 'api'];

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
}

/** The user behind an authenticated request. */
export interface AuthenticatedUser {
  readonly id: string;
  readonly state: 'normal' | 'banned';
}
