import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import {
  SESSION_TYPES,
  type AuthenticatedSession,
  type SessionType,
} from 'src/common/auth/authenticated-session';
import { SESSION_TYPES_KEY } from 'src/common/decorators/auth.decorator';
import { IS_PUBLIC_KEY } from 'src/common/decorators/public.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

const BEARER = /^Bearer\s+/i;

interface HeaderCarrier {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The global authentication guard (`APP_GUARD`): every route needs a session unless `@Public()`.
 * Accepts `Authorization: Bearer <token>` (UserAuth) and the bare token (PublicAuth), resolves it
 * through the bearer strategy, and checks the session type the route accepts (`@Auth(...)`).
 */
@Injectable()
export class SessionAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) return true;
    normaliseAuthorization(context.switchToHttp().getRequest<HeaderCarrier>());
    await super.canActivate(context);
    const session = context.switchToHttp().getRequest<{ user: AuthenticatedSession }>().user;
    const accepted =
      this.reflector.getAllAndOverride<SessionType[]>(SESSION_TYPES_KEY, targets) ?? SESSION_TYPES;
    if (!accepted.includes(session.type)) {
      throw new AppException(
        ErrorCode.Restricted,
        session.type === 'api'
          ? 'API tokens cannot use this route; it needs a login session'
          : 'Login sessions cannot use this route; it needs an API token',
      );
    }
    return true;
  }

  /** Passport reports a missing or unusable credential without an error: map it to our codes. */
  override handleRequest<T>(error: Error | null, session: T | false): T {
    if (error) throw error;
    if (!session) {
      throw new AppException(ErrorCode.InvalidToken, 'The Authorization header is malformed');
    }
    return session;
  }
}

/** Missing header: NoAuthToken. A bare token (PublicAuth) is read as `Bearer <token>`. */
function normaliseAuthorization(request: HeaderCarrier): void {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || header.trim() === '') {
    throw new AppException(
      ErrorCode.NoAuthToken,
      'This route needs a token in the Authorization header',
    );
  }
  if (!BEARER.test(header)) request.headers.authorization = `Bearer ${header.trim()}`;
}
