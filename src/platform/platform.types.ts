/** What a "not found" answer of the platform was about. */
export type MissingEntity = 'guild' | 'member' | 'channel' | 'user';

/**
 * A lookup that may legitimately find nothing (the bot is not in the guild, the user is not a
 * member). Callers turn `found: false` into 404 `NotFound` with a message saying which.
 */
export type Lookup<T> = { found: true; value: T } | { found: false; missing: MissingEntity };

/** How a request authenticates to the platform. */
export type PlatformAuth =
  | { kind: 'bot' }
  | { kind: 'bearer'; token: string }
  /** OAuth2 client authentication (token and revoke endpoints). */
  | { kind: 'client' };

/** The platform's answer to a token exchange or refresh. */
export interface OAuth2Grant {
  access_token: string;
  token_type: string;
  /** Seconds. */
  expires_in: number;
  refresh_token: string;
  /** Space-separated. */
  scope: string;
}
