import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Authorization, readAuthorization, tokenOf } from 'src/auth/authorization-header';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import { StrategyRunner } from 'src/auth/strategy-runner';
import {
  SESSION_TYPES,
  type AuthenticatedSession,
  type SessionType,
} from 'src/common/auth/authenticated-session';
import { chargeToUser } from 'src/common/http/request-context';
import { SESSION_TYPES_KEY } from 'src/common/decorators/auth.decorator';
import { IS_PUBLIC_KEY } from 'src/common/decorators/public.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { SessionsService } from 'src/sessions/sessions.service';

/** What a route asks of authentication, read once per handler from its decorators. */
interface RouteAuth {
  isPublic: boolean;
  accepted: readonly SessionType[];
}

/**
 * The global authentication guard (`APP_GUARD`): every route needs a session unless `@Public()`.
 * It reads the Authorization header (`Bearer <token>` for UserAuth, the bare token for PublicAuth),
 * runs the passport `bearer` strategy (`BearerStrategy`) on it, stores the session as
 * `request.session`, and checks that the route accepts its type (`@Auth(...)`). See
 * docs/authentication.md.
 */
@Injectable()
export class SessionAuthGuard implements CanActivate {
  /** By controller class, then handler: a handler inherited by two controllers may differ. */
  private readonly routes = new Map<object, Map<object, RouteAuth>>();
  /**
   * This application's own `bearer` strategy, run as passport runs it (`StrategyRunner`): the
   * global passport holds whichever application registered `bearer` last, and tests run several in
   * one process.
   */
  private readonly bearer: StrategyRunner<AuthenticatedSession>;

  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly sessions: SessionsService,
    strategy: BearerStrategy,
  ) {
    this.bearer = new StrategyRunner(strategy, malformedHeader);
  }

  /** A public route is let through at once, without a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeAuth(context);
    return route.isPublic || this.admitCaller(context, route);
  }

  /** Resolves the caller's session, counting a failure against the address, and checks its type. */
  private async admitCaller(context: ExecutionContext, route: RouteAuth): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const authorization = readAuthorization(request.headers.authorization);
    // An address that keeps failing to authenticate is refused before any database work, except
    // for tokens known to be valid: several users behind one address must not pay for a guesser.
    const refused = this.limiter.enabled && this.limiter.knownRefusal('invalid-token', request.ip);
    if (refused && !(await this.isRecognised(authorization))) {
      this.limiter.writeHeaders(reply, refused);
      throw this.limiter.refusal(refused);
    }
    let session: AuthenticatedSession;
    try {
      presentBearerToken(request, authorization);
      // The strategy's error as is, else the session; it fails on its own only for what the
      // header parser let through, a second token in the body or query.
      session = await this.bearer.run(request);
    } catch (error) {
      if (isAuthenticationFailure(error)) await this.countFailure(request.ip, reply);
      throw error;
    }
    request.session = session;
    chargeToUser(session.userId);
    requireAcceptedType(session, route.accepted);
    return true;
  }

  /** The route's decorators never change at run time: read them once per handler. */
  private routeAuth(context: ExecutionContext): RouteAuth {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.routes.get(controller);
    if (!handlers) this.routes.set(controller, (handlers = new Map<object, RouteAuth>()));
    let route = handlers.get(handler);
    if (!route) {
      const targets = [handler, controller];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets) ?? false,
        accepted:
          this.reflector.getAllAndOverride<SessionType[]>(SESSION_TYPES_KEY, targets) ??
          SESSION_TYPES,
      };
      handlers.set(handler, route);
    }
    return route;
  }

  /** Whether the header names a token worth looking up for an address past its failure budget. */
  private async isRecognised(authorization: Authorization): Promise<boolean> {
    const token = tokenOf(authorization);
    return token !== null && (await this.sessions.isRecognised(token));
  }

  /** Counts a failed authentication against the address; past the budget it answers 429. */
  private async countFailure(ip: string, reply: FastifyReply): Promise<void> {
    if (!this.limiter.enabled) return;
    const state = await this.limiter.count('invalid-token', ip);
    this.limiter.writeHeaders(reply, state);
    if (state.blocked) throw this.limiter.refusal(state);
  }
}

/**
 * Refuses a header that names no token; a bare token (PublicAuth) is handed to the strategy as
 * `Bearer <token>`, the one form passport-http-bearer reads.
 */
function presentBearerToken(request: FastifyRequest, authorization: Authorization): void {
  switch (authorization.kind) {
    case 'missing':
      throw new AppException(
        ErrorCode.NoAuthToken,
        'This route needs a token in the Authorization header',
      );
    case 'malformed':
      throw malformedHeader();
    case 'bare':
      request.headers.authorization = `Bearer ${authorization.token}`;
      return;
    case 'bearer':
      return;
  }
}

/** A header the strategy cannot read, or a second token beside it. */
function malformedHeader(): AppException {
  return new AppException(ErrorCode.InvalidToken, 'The Authorization header is malformed');
}

/** The route must accept the session's type (`@Auth(...)`; both by default). */
function requireAcceptedType(
  session: AuthenticatedSession,
  accepted: readonly SessionType[],
): void {
  if (accepted.includes(session.type)) return;
  throw new AppException(
    ErrorCode.Restricted,
    session.type === 'api'
      ? 'API tokens cannot use this route; it needs a login session'
      : 'Login sessions cannot use this route; it needs an API token',
  );
}

/** Missing, malformed, unknown, expired or revoked credentials (not bans, not store failures). */
function isAuthenticationFailure(error: unknown): boolean {
  return (
    error instanceof AppException &&
    (error.code === ErrorCode.NoAuthToken || error.code === ErrorCode.InvalidToken)
  );
}
