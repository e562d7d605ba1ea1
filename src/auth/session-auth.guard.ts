import { type ExecutionContext, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyReply } from 'fastify';
import {
  SESSION_TYPES,
  type AuthenticatedSession,
  type SessionType,
} from 'src/common/auth/authenticated-session';
import { SESSION_TYPES_KEY } from 'src/common/decorators/auth.decorator';
import { IS_PUBLIC_KEY } from 'src/common/decorators/public.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { SessionsService } from 'src/sessions/sessions.service';

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
export class SessionAuthGuard extends AuthGuard('bearer') implements OnApplicationBootstrap {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly sessions: SessionsService,
  ) {
    super();
  }

  /** The HTTP service only (not the CLI): tokens valid before a restart pass a refused address. */
  async onApplicationBootstrap(): Promise<void> {
    await this.sessions.loadKnownTokens();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<HeaderCarrier & { ip: string }>();
    const reply = http.getResponse<FastifyReply>();
    // An address that keeps failing to authenticate is refused before any database work, except
    // for tokens known to be valid: several users behind one address must not pay for a guesser.
    const refused = this.limiter.enabled && this.limiter.knownRefusal('invalid-token', request.ip);
    if (refused && !(await this.isRecognised(request))) {
      this.limiter.writeHeaders(reply, refused);
      throw this.limiter.refusal(refused);
    }
    try {
      normaliseAuthorization(request);
      await super.canActivate(context);
    } catch (error) {
      if (isAuthenticationFailure(error)) await this.countFailure(request.ip, reply);
      throw error;
    }
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

  private async isRecognised(request: HeaderCarrier): Promise<boolean> {
    const token = bearerToken(request.headers.authorization);
    return token !== null && (await this.sessions.isRecognised(token));
  }

  /** Counts a failed authentication against the address; past the budget it answers 429. */
  private async countFailure(ip: string, reply: FastifyReply): Promise<void> {
    if (!this.limiter.enabled) return;
    const state = await this.limiter.count('invalid-token', ip);
    this.limiter.writeHeaders(reply, state);
    if (state.blocked) throw this.limiter.refusal(state);
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

/** Missing, malformed, unknown, expired or revoked credentials (not bans, not store failures). */
function isAuthenticationFailure(error: unknown): boolean {
  return (
    error instanceof AppException &&
    (error.code === ErrorCode.NoAuthToken || error.code === ErrorCode.InvalidToken)
  );
}

/** The token the bearer strategy will read from the header (both forms), if any. */
function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string' || header.trim() === '') return null;
  if (!BEARER.test(header)) return header.trim();
  const parts = header.split(' ');
  return parts.length === 2 ? parts[1] : null;
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
