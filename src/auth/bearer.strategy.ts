import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { whenSettled } from 'src/common/async/maybe-async';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { SessionsService } from 'src/sessions/sessions.service';

/** How passport-http-bearer hands a token over and takes its outcome back. */
type VerifyFunction = (
  token: string,
  verified: (error: unknown, session: AuthenticatedSession | null) => void,
) => void;

/** Resolves `Authorization: Bearer <token>` to a live, unbanned session. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly sessions: SessionsService) {
    super();
    // The mixin's verify function awaits `validate`, so even a cached session would be reported a
    // promise later; this one reports it at once, and a looked-up session when its promise settles.
    (this as unknown as { _verify: VerifyFunction })._verify = (token, verified) =>
      this.verify(token, verified);
  }

  private verify(token: string, verified: Parameters<VerifyFunction>[1]): void {
    void whenSettled(
      () => this.validate(token),
      (session) => verified(null, session),
      (error) => verified(error, null),
    );
  }

  /** Answered from the session cache without a promise when it can be: most requests are. */
  validate(token: string): AuthenticatedSession | Promise<AuthenticatedSession> {
    const cached = this.sessions.cachedSession(token);
    return cached === undefined ? this.lookUp(token) : admitted(cached);
  }

  private async lookUp(token: string): Promise<AuthenticatedSession> {
    let session: AuthenticatedSession | null;
    try {
      session = await this.sessions.authenticate(token);
    } catch {
      throw new AppException(
        ErrorCode.InternalAuthError,
        'The authentication system is unavailable; try again later',
      );
    }
    return admitted(session);
  }
}

/** A live, unbanned session; any other outcome refuses the request. */
function admitted(session: AuthenticatedSession | null): AuthenticatedSession {
  if (!session) {
    throw new AppException(ErrorCode.InvalidToken, 'The token is invalid, expired or revoked');
  }
  if (session.userState === 'banned') {
    throw new AppException(ErrorCode.ApiBanned, 'This account is banned from this service');
  }
  if (session.state === 'banned') {
    throw new AppException(ErrorCode.ApiBanned, 'This token is banned');
  }
  return session;
}
