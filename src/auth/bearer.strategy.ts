import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { SessionsService } from 'src/sessions/sessions.service';

/** Resolves `Authorization: Bearer <token>` to a live, unbanned session. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly sessions: SessionsService) {
    super();
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
