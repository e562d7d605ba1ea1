import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import {
  SESSION_TYPES,
  type AuthenticatedSession,
  type SessionType,
} from 'src/common/auth/authenticated-session';
import { SESSION_TYPES_KEY } from 'src/common/decorators/auth.decorator';
import { IS_PUBLIC_KEY } from 'src/common/decorators/public.decorator';
import { whenSettled } from 'src/common/async/maybe-async';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimiter, type BucketState } from 'src/common/rate-limit/rate-limiter';
import { SessionsService } from 'src/sessions/sessions.service';

const BEARER = /^Bearer\s+/i;

interface HeaderCarrier {
  headers: Record<string, string | string[] | undefined>;
}

/** What a route asks of authentication, read once per handler from its decorators. */
interface RouteAuth {
  isPublic: boolean;
  accepted: readonly SessionType[];
}

/** The calls a passport strategy makes to report its outcome (passport's action functions). */
interface StrategyActions {
  success(session: AuthenticatedSession): void;
  fail(): void;
  error(error: unknown): void;
  authenticate(request: unknown): void;
}

/**
 * The global authentication guard (`APP_GUARD`): every route needs a session unless `@Public()`.
 * Accepts `Authorization: Bearer <token>` (UserAuth) and the bare token (PublicAuth), resolves it
 * through the bearer strategy, and checks the session type the route accepts (`@Auth(...)`).
 *
 * The strategy runs as passport runs it (its `authenticate` on a per-request copy whose `success`,
 * `fail` and `error` report the outcome) but without passport's per-request middleware, request
 * decoration and login step: on every request they cost more than the lookup itself.
 */
@Injectable()
export class SessionAuthGuard implements CanActivate {
  /** By controller class, then handler: a handler inherited by two controllers may differ. */
  private readonly routes = new Map<object, Map<object, RouteAuth>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly sessions: SessionsService,
    private readonly strategy: BearerStrategy,
  ) {}

  /** A public route, and a cached session, are let through synchronously. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeAuth(context);
    return route.isPublic || this.authenticateCaller(context, route);
  }

  /**
   * Resolves the request's session and checks that the route accepts its type. A cached session
   * is admitted synchronously: every promise here would cost each request a microtask turn.
   */
  private authenticateCaller(
    context: ExecutionContext,
    route: RouteAuth,
  ): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    // An address that keeps failing to authenticate is refused before any database work, except
    // for tokens known to be valid: several users behind one address must not pay for a guesser.
    const refused = this.limiter.enabled && this.limiter.knownRefusal('invalid-token', request.ip);
    if (refused) return this.authenticateRefusedAddress(request, reply, route, refused);
    return whenSettled(
      () => {
        normaliseAuthorization(request);
        return this.authenticate(request);
      },
      (session): boolean | Promise<boolean> => admit(request, route, session),
      (error) => this.failed(error, request.ip, reply),
    );
  }

  /** An address past its failure budget: only a token known to be valid is looked at. */
  private async authenticateRefusedAddress(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteAuth,
    refused: BucketState,
  ): Promise<boolean> {
    if (!(await this.isRecognised(request))) {
      this.limiter.writeHeaders(reply, refused);
      throw this.limiter.refusal(refused);
    }
    let session: AuthenticatedSession;
    try {
      normaliseAuthorization(request);
      session = await this.authenticate(request);
    } catch (error) {
      return this.failed(error, request.ip, reply);
    }
    return admit(request, route, session);
  }

  /** Counts a failed authentication against the address, then refuses the request. */
  private async failed(error: unknown, ip: string, reply: FastifyReply): Promise<never> {
    if (isAuthenticationFailure(error)) await this.countFailure(ip, reply);
    throw error;
  }

  /**
   * Runs the bearer strategy on the request: the live session, or the error it failed with. The
   * strategy reports a cached session before `authenticate` returns, so it is answered as is.
   */
  private authenticate(
    request: FastifyRequest,
  ): AuthenticatedSession | Promise<AuthenticatedSession> {
    let reported: StrategyOutcome | undefined;
    let settle: ((outcome: StrategyOutcome) => void) | undefined;
    const report = (outcome: StrategyOutcome): void => {
      if (settle) settle(outcome);
      else reported = outcome;
    };
    const attempt = Object.create(this.strategy) as StrategyActions;
    attempt.success = (session) => report({ session });
    // A header the strategy cannot parse (or a second token in the body or query).
    attempt.fail = () =>
      report({
        error: new AppException(ErrorCode.InvalidToken, 'The Authorization header is malformed'),
      });
    attempt.error = (error) => report({ error });
    attempt.authenticate(request);
    if (reported) return sessionOf(reported);
    return new Promise<StrategyOutcome>((resolve) => (settle = resolve)).then(sessionOf);
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
}

type StrategyOutcome = { session: AuthenticatedSession } | { error: unknown };

function sessionOf(outcome: StrategyOutcome): AuthenticatedSession {
  if ('error' in outcome) throw outcome.error;
  return outcome.session;
}

/** Stores the session on the request once the route is known to accept its type. */
function admit(request: FastifyRequest, route: RouteAuth, session: AuthenticatedSession): boolean {
  request.session = session;
  if (!route.accepted.includes(session.type)) {
    throw new AppException(
      ErrorCode.Restricted,
      session.type === 'api'
        ? 'API tokens cannot use this route; it needs a login session'
        : 'Login sessions cannot use this route; it needs an API token',
    );
  }
  requireGuildInScope(session, request.params);
  return true;
}

/** Missing, malformed, unknown, expired or revoked credentials (not bans, not store failures). */
function isAuthenticationFailure(error: unknown): boolean {
  return (
    error instanceof AppException &&
    (error.code === ErrorCode.NoAuthToken || error.code === ErrorCode.InvalidToken)
  );
}

/** The token the bearer strategy will read from the header (both forms), if any. */
export function bearerToken(header: string | string[] | undefined): string | null {
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

/**
 * A token limited to some guilds may not act in another: every route about one guild names it
 * `guild_id`, so every such route is covered, including routes added later.
 */
function requireGuildInScope(session: AuthenticatedSession, params: unknown): void {
  const guilds = session.scope?.guilds;
  const guildId = (params as { guild_id?: unknown } | undefined)?.guild_id;
  if (!guilds || typeof guildId !== 'string' || guilds.includes(guildId)) return;
  throw new AppException(
    ErrorCode.Restricted,
    `This API token is limited to the guilds ${guilds.join(', ')}`,
  );
}
