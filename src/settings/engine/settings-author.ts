import type { AuthenticatedSession, SessionType } from 'src/common/auth/authenticated-session';

/** Who runs an operation: the user, and the session or API token used (none from the CLI). */
export interface SettingsAuthor {
  userId: string;
  sessionId: string | null;
  sessionType: SessionType | null;
  /** A scoped API token's permission strings: the user's own are limited to them. */
  scope?: readonly string[];
}

/** The author of a change made through the API: the user, their session or token, its scope. */
export function authorOf(session: AuthenticatedSession): SettingsAuthor {
  return {
    userId: session.userId,
    sessionId: session.id,
    sessionType: session.type,
    scope: session.scope?.permissions ?? undefined,
  };
}
