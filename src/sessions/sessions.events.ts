/**
 * A user's last login session ended (revoked by its owner). Emitted with `emitAsync` and awaited:
 * the platform grant behind those logins is retired before the revocation is answered.
 */
export class LastLoginEndedEvent {
  static readonly event = 'sessions.last-login-ended';

  constructor(readonly userId: string) {}
}
