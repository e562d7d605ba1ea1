import type {
  AuthenticatedSession,
  SessionType,
  TokenScope,
} from 'src/common/auth/authenticated-session';

/**
 * Who runs a settings operation: the user, and the session or API token used, with its scope. A
 * request's session is its author as it is (controllers pass `@CurrentSession()` on); the CLI acts
 * with no session (`id` and `type` null) and no scope.
 */
export interface SettingsAuthor extends Pick<AuthenticatedSession, 'userId'> {
  readonly id: string | null;
  readonly type: SessionType | null;
  /** A scoped API token's: the user's permissions are limited to its permission strings. */
  readonly scope: Pick<TokenScope, 'permissions'> | null;
}
