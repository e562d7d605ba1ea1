/**
 * A user's last login session ended (revoked by its owner). Emitted with `emitAsync` and awaited:
 * the platform grant behind those logins is retired before the revocation is answered.
 */
export class LastLoginEndedEvent {
  static readonly event = 'sessions.last-login-ended';

  constructor(readonly userId: string) {}
}

/**
 * A session was revoked, or a user's sessions changed (a ban or unban), here or on another
 * instance: emitted on every instance as the change reaches it, so that what a session holds open
 * (its event streams) ends at once.
 */
export class SessionsInvalidatedEvent {
  static readonly event = 'sessions.invalidated';

  constructor(readonly target: { readonly session: string } | { readonly user: string }) {}
}
