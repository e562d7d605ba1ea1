import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { authenticationUnavailable } from 'src/common/errors/outage';
import { SessionsService } from 'src/sessions/sessions.service';

/**
 * The `bearer` strategy: resolves the token of `Authorization: Bearer <token>` to a live, unbanned
 * session. Any other outcome is an `AppException` the guard answers as is.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly sessions: SessionsService) {
    super();
  }

  async validate(token: string): Promise<AuthenticatedSession> {
    let session: AuthenticatedSession | null;
    try {
      session = await this.sessions.authenticate(token);
    } catch (error) {
      throw authenticationUnavailable(error);
    }
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
}
