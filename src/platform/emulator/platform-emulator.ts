import { setMaxListeners } from 'node:events';
import formBody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { RESTPutAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { isSnowflake } from 'src/common/validation/snowflake';
import { DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { InvalidAnswerCounts } from 'src/platform/emulator/emulator-invalid-answers';
import {
  bucketOf,
  EmulatorRateLimits,
  type EmulatorRateLimitOptions,
} from 'src/platform/emulator/emulator-rate-limits';
import type { CodeChallenge, Grant } from 'src/platform/emulator/emulator-oauth2';
import { guildObject, roleObject } from 'src/platform/emulator/emulator-shapes';
import { EmulatorState } from 'src/platform/emulator/emulator.state';

/**
 * Runs before every route with the request's route template (e.g. `GET /guilds/:guild_id`): it may
 * answer the reply itself, or wait, standing in for a misbehaving platform (tests install one). The
 * signal aborts when the emulator closes.
 */
export type EmulatorInterceptor = (
  route: string,
  reply: FastifyReply,
  closing: AbortSignal,
) => Promise<void> | void;

/** One request as the emulator saw it: `route` is the template, e.g. `GET /guilds/:guild_id`. */
export interface EmulatedRequest {
  route: string;
  url: string;
  at: number;
  auth: 'bot' | 'bearer' | 'none' | 'invalid';
  /** The caller's address, as the platform counts invalid requests by it. */
  address: string;
  /** The answer's status (a 429 of the rate limits or an interceptor's included); null until sent. */
  status: number | null;
  /** The answer's `X-RateLimit-Scope` (a 429's: `global`, `user` or `shared`); null without one. */
  scope: string | null;
}

/** An answer as it left the emulator, for checks of its shape (test/support/discord-spec.ts). */
export interface EmulatedAnswer {
  /** The route template, e.g. `GET /guilds/:guild_id`; `GET ` for a route it does not serve. */
  route: string;
  status: number;
  /** The JSON text sent; null for an answer without a body. */
  body: string | null;
}

/** The request log keeps this many of the newest requests (a demo runs for days). */
const MAX_LOGGED_REQUESTS = 10_000;

export interface EmulatorOptions {
  /** The bound of `requests`; the oldest go first. */
  maxLoggedRequests?: number;
  /**
   * Enforces the platform's rate limits (docs/platform.md, "Rate limits in the emulator"): off
   * unless given; `{}` for the platform's defaults.
   */
  rateLimits?: EmulatorRateLimitOptions;
  /** The clock of the rate limits, the invalid-answer counts and the request log. */
  now?: () => number;
}

type Caller = { kind: 'bot' } | { kind: 'bearer'; grant: Grant };

/** The OAuth2 scope of `GET /users/@me/guilds/{id}/member`. */
export const MEMBER_READ_SCOPE = 'guilds.members.read';

/** The platform's JSON error bodies. */
const ERRORS = {
  unauthorized: { status: 401, body: { message: '401: Unauthorized', code: 0 } },
  notFound: { status: 404, body: { message: '404: Not Found', code: 0 } },
  unknownGuild: { status: 404, body: { message: 'Unknown Guild', code: 10004 } },
  unknownMember: { status: 404, body: { message: 'Unknown Member', code: 10007 } },
  unknownUser: { status: 404, body: { message: 'Unknown User', code: 10013 } },
  missingAccess: { status: 403, body: { message: 'Missing Access', code: 50001 } },
} as const;

class EmulatorError extends Error {
  constructor(readonly answer: { status: number; body: object }) {
    super(JSON.stringify(answer.body));
  }
}

/**
 * The built-in chat-platform emulator: the subset of the platform's REST API this service uses,
 * served over HTTP from a seed, with the platform's status codes and error bodies. Demo mode runs it
 * in-process; tests drive it directly (an interceptor, the request log, codes).
 */
export class PlatformEmulator {
  /** The newest requests, up to `maxLoggedRequests`. */
  readonly requests: EmulatedRequest[] = [];
  /** Every request ever seen, per route (a route template is one of a few dozen keys). */
  private readonly counts = new Map<string, number>();
  private readonly maxLoggedRequests: number;
  private readonly now: () => number;
  private readonly rateLimits: EmulatorRateLimits | null;
  private readonly invalid: InvalidAnswerCounts;
  /** The log entry of each request under way, for its status once answered. */
  private readonly entries = new WeakMap<FastifyRequest, EmulatedRequest>();
  private interceptor: EmulatorInterceptor | null = null;
  private readonly answerListeners = new Set<(answer: EmulatedAnswer) => void>();
  // Connections are closed on shutdown even while an interceptor holds a request.
  private readonly server: FastifyInstance = Fastify({
    logger: false,
    forceCloseConnections: true,
  });
  private address = '';
  /** Aborts what an interceptor is waiting for when the emulator closes. */
  private readonly closing = new AbortController();

  private constructor(
    readonly state: EmulatorState,
    options: EmulatorOptions,
  ) {
    this.maxLoggedRequests = options.maxLoggedRequests ?? MAX_LOGGED_REQUESTS;
    this.now = options.now ?? Date.now;
    this.rateLimits = options.rateLimits
      ? new EmulatorRateLimits(options.rateLimits, this.now)
      : null;
    this.invalid = new InvalidAnswerCounts(this.now);
    // Any number of requests may be held by the interceptor at once, each listening for the abort.
    setMaxListeners(0, this.closing.signal);
  }

  static async start(
    seed: EmulatorSeed = DEMO_SEED,
    listen: { host?: string; port?: number } = {},
    options: EmulatorOptions = {},
  ): Promise<PlatformEmulator> {
    const emulator = new PlatformEmulator(new EmulatorState(structuredClone(seed)), options);
    await emulator.listen(listen.host ?? '127.0.0.1', listen.port ?? 0);
    return emulator;
  }

  /** What `DISCORD_API_URL` would be: requests go to `${apiUrl}/v10/…`. */
  get apiUrl(): string {
    return `${this.address}/api`;
  }

  /** Issues a single-use authorization code, as the platform's consent screen would. */
  issueCode(options: {
    userId: string;
    /** The seed's `login_scopes` (by default `identify guilds`) when absent. */
    scopes?: string[];
    redirectUri: string;
    /** PKCE: the exchange must then send the verifier this challenge was made from. */
    challenge?: CodeChallenge;
  }): string {
    return this.state.issueCode(
      options.userId,
      options.scopes ?? this.state.loginScopes,
      options.redirectUri,
      options.challenge,
    );
  }

  /** Installs (or, with null, removes) what runs before every route. */
  intercept(interceptor: EmulatorInterceptor | null): void {
    this.interceptor = interceptor;
  }

  /** Calls `listener` with every answer sent from now on; returns what stops it. */
  onAnswer(listener: (answer: EmulatedAnswer) => void): () => void {
    this.answerListeners.add(listener);
    return () => this.answerListeners.delete(listener);
  }

  /** How many requests reached `route` (faulted ones included), since the start. */
  countRequests(route: string): number {
    return this.counts.get(route) ?? 0;
  }

  /** How many requests reached the emulator on any route (faulted ones included), since the start. */
  countAllRequests(): number {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    return total;
  }

  /**
   * The invalid answers (401, 403, and 429 but a shared resource's) of the last ten minutes that
   * the platform would hold against `address`, or against every address: it bans at 10,000.
   */
  invalidAnswers(address?: string): number {
    return this.invalid.count(address);
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.server.close();
  }

  private async listen(host: string, port: number): Promise<void> {
    await this.server.register(formBody);
    this.server.addHook('onRequest', (request, reply) => this.beforeRoute(request, reply));
    this.server.addHook('onSend', (request, reply, payload, done) => {
      this.answered(request, reply);
      if (this.answerListeners.size > 0) {
        const answer: EmulatedAnswer = {
          route: routeOf(request),
          status: reply.statusCode,
          body: typeof payload === 'string' ? payload : null,
        };
        for (const listener of this.answerListeners) listener(answer);
      }
      done(null, payload);
    });
    this.server.setErrorHandler((error, _request, reply) => {
      const answer =
        error instanceof EmulatorError
          ? error.answer
          : { status: 500, body: { message: '500: Internal Server Error', code: 0 } };
      void reply.code(answer.status).send(answer.body);
    });
    this.server.setNotFoundHandler((_request, reply) => {
      void reply.code(404).send(ERRORS.notFound.body);
    });
    registerRoutes(this.server, this.state);
    this.address = await this.server.listen({ host, port });
  }

  private async beforeRoute(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = routeOf(request);
    this.counts.set(route, (this.counts.get(route) ?? 0) + 1);
    const entry: EmulatedRequest = {
      route,
      url: request.url,
      at: this.now(),
      auth: authKind(request, this.state),
      address: request.ip,
      status: null,
      scope: null,
    };
    this.requests.push(entry);
    this.entries.set(request, entry);
    if (this.requests.length > this.maxLoggedRequests) this.requests.shift();
    if (this.rateLimits) {
      const verdict = this.rateLimits.admit({
        route,
        identity: rateLimitIdentity(request),
        majorParameter: majorParameterOf(request.params as Params | undefined),
      });
      void reply.headers(verdict.headers);
      if (verdict.refused) {
        await reply.code(429).send(verdict.body);
        return;
      }
    } else {
      // The platform names a route's rate-limit bucket on every answer; clients key their limits on it.
      void reply.header('X-RateLimit-Bucket', bucketOf(route));
    }
    if (this.interceptor) await this.interceptor(route, reply, this.closing.signal);
  }

  /** The answer's status goes to the log, and to the invalid-answer counts. */
  private answered(request: FastifyRequest, reply: FastifyReply): void {
    const entry = this.entries.get(request);
    if (!entry) return;
    this.entries.delete(request);
    entry.status = reply.statusCode;
    const scope = reply.getHeader('X-RateLimit-Scope');
    entry.scope = typeof scope === 'string' ? scope : null;
    this.invalid.record(entry.address, reply.statusCode, entry.scope);
  }
}

/** The request's route template, e.g. `GET /guilds/:guild_id` (`GET ` for a route not served). */
function routeOf(request: FastifyRequest): string {
  return `${request.method} ${(request.routeOptions.url ?? '').replace(/^\/api\/v10/, '')}`;
}

/**
 * Whom the platform limits: the bot or user token a request carries, or, without one (the OAuth2
 * client credentials included), its address.
 */
function rateLimitIdentity(request: FastifyRequest): string {
  const [scheme, token] = (request.headers.authorization ?? '').split(' ', 2);
  if ((scheme === 'Bot' || scheme === 'Bearer') && token) return `${scheme} ${token}`;
  return `address ${request.ip}`;
}

/** The top-level resource a route's limits are kept per: its guild, or its application. */
function majorParameterOf(params: Params | undefined): string {
  return params?.guild_id ?? params?.application_id ?? '';
}

function authKind(request: FastifyRequest, state: EmulatorState): EmulatedRequest['auth'] {
  const header = request.headers.authorization;
  if (!header) return 'none';
  try {
    return callerOf(request, state).kind;
  } catch {
    return 'invalid';
  }
}

function callerOf(request: FastifyRequest, state: EmulatorState): Caller {
  const header = request.headers.authorization ?? '';
  const [scheme, token] = header.split(' ', 2);
  if (scheme === 'Bot' && token === state.seed.application.bot_token) return { kind: 'bot' };
  if (scheme === 'Bearer' && token) {
    const grant = state.grantForAccessToken(token);
    if (grant) return { kind: 'bearer', grant };
  }
  throw new EmulatorError(ERRORS.unauthorized);
}

function requireBot(request: FastifyRequest, state: EmulatorState): void {
  if (callerOf(request, state).kind !== 'bot') throw new EmulatorError(ERRORS.unauthorized);
}

function requireScope(caller: Caller, scope: string): void {
  if (caller.kind === 'bearer' && !caller.grant.scopes.includes(scope)) {
    throw new EmulatorError(ERRORS.unauthorized);
  }
}

type Params = Record<string, string>;

function registerRoutes(server: FastifyInstance, state: EmulatorState): void {
  const v10 = '/api/v10';

  server.post(`${v10}/oauth2/token`, (request, reply) => {
    const form = formOf(request);
    if (!clientAuthenticated(request, form, state)) {
      return reply.code(401).send({ error: 'invalid_client' });
    }
    const grant =
      form.grant_type === 'authorization_code'
        ? state.redeemCode(form.code ?? '', form.redirect_uri ?? '', form.code_verifier)
        : form.grant_type === 'refresh_token'
          ? state.refresh(form.refresh_token ?? '')
          : null;
    if (grant === null) return reply.code(400).send({ error: 'unsupported_grant_type' });
    if (!grant) return reply.code(400).send({ error: 'invalid_grant' });
    if ('refused' in grant) {
      return reply.code(400).send({ error: 'invalid_grant', error_description: grant.refused });
    }
    return {
      access_token: grant.accessToken,
      token_type: 'Bearer',
      expires_in: Math.round((grant.expiresAt - Date.now()) / 1000),
      refresh_token: grant.refreshToken,
      scope: grant.scopes.join(' '),
    };
  });

  server.post(`${v10}/oauth2/token/revoke`, (request, reply) => {
    const form = formOf(request);
    if (!clientAuthenticated(request, form, state)) {
      return reply.code(401).send({ error: 'invalid_client' });
    }
    state.revoke(form.token ?? '');
    return {};
  });

  server.get(`${v10}/users/@me`, (request) => {
    const caller = callerOf(request, state);
    requireScope(caller, 'identify');
    const id = caller.kind === 'bot' ? state.botUserId : caller.grant.userId;
    const user = state.currentUserObject(id);
    if (!user) throw new EmulatorError(ERRORS.unknownUser);
    return user;
  });

  server.get(`${v10}/users/@me/guilds`, (request) => {
    const caller = callerOf(request, state);
    requireScope(caller, 'guilds');
    const query = request.query as Record<string, string | undefined>;
    const limit = Math.min(Math.max(Number(query.limit ?? 200) || 200, 1), 200);
    const id = caller.kind === 'bot' ? state.botUserId : caller.grant.userId;
    return state.partialGuildsOf(id, { after: query.after, before: query.before, limit });
  });

  // The user's own member (OAuth2 scope guilds.members.read; a token without it is refused 401,
  // as on the other user routes). A guild the user is not in, or that does not exist, is a 404:
  // clients of the platform read 404 as "not on that server"; the docs give no body, so it is
  // the one the platform gives for a guild it will not show (Unknown Guild, 10004).
  server.get(`${v10}/users/@me/guilds/:guild_id/member`, (request) => {
    const caller = callerOf(request, state);
    requireScope(caller, MEMBER_READ_SCOPE);
    const id = caller.kind === 'bot' ? state.botUserId : caller.grant.userId;
    const { guild_id: guildId } = request.params as Params;
    const guild = isSnowflake(guildId) ? state.guild(guildId) : undefined;
    const member = guild ? state.member(guild, id) : undefined;
    if (!member) throw new EmulatorError(ERRORS.unknownGuild);
    return state.memberObject(member);
  });

  server.get(`${v10}/guilds/:guild_id`, (request) => {
    requireBot(request, state);
    return guildObject(botVisibleGuild(request.params as Params, state));
  });

  // Not called by the service (its guild lookup brings the roles); served as the platform does.
  server.get(`${v10}/guilds/:guild_id/roles`, (request) => {
    requireBot(request, state);
    return botVisibleGuild(request.params as Params, state).roles.map(roleObject);
  });

  server.get(`${v10}/guilds/:guild_id/channels`, (request) => {
    requireBot(request, state);
    return state.channelObjects(botVisibleGuild(request.params as Params, state));
  });

  server.get(`${v10}/guilds/:guild_id/threads/active`, (request) => {
    requireBot(request, state);
    return {
      threads: state.threadObjects(botVisibleGuild(request.params as Params, state)),
      members: [],
      has_more: false,
    };
  });

  server.get(`${v10}/guilds/:guild_id/members/:user_id`, (request) => {
    requireBot(request, state);
    const params = request.params as Params;
    const guild = botVisibleGuild(params, state);
    if (!isSnowflake(params.user_id) || !state.user(params.user_id)) {
      throw new EmulatorError(ERRORS.unknownUser);
    }
    const member = state.member(guild, params.user_id);
    if (!member) throw new EmulatorError(ERRORS.unknownMember);
    return state.memberObject(member);
  });

  server.get(`${v10}/applications/:application_id/commands`, (request) => {
    requireBot(request, state);
    ownApplication(request.params as Params, state);
    return state.listCommands();
  });

  server.put(`${v10}/applications/:application_id/commands`, (request) => {
    requireBot(request, state);
    ownApplication(request.params as Params, state);
    if (!Array.isArray(request.body)) {
      throw new EmulatorError({
        status: 400,
        body: { message: 'Invalid Form Body', code: 50035 },
      });
    }
    return state.replaceCommands(request.body as RESTPutAPIApplicationCommandsJSONBody);
  });
}

/** The guild, when it exists and the bot is in it (the platform answers 403 otherwise). */
function botVisibleGuild(
  params: Params,
  state: EmulatorState,
): NonNullable<ReturnType<EmulatorState['guild']>> {
  const guild = isSnowflake(params.guild_id) ? state.guild(params.guild_id) : undefined;
  if (!guild) throw new EmulatorError(ERRORS.unknownGuild);
  if (!state.member(guild, state.botUserId)) throw new EmulatorError(ERRORS.missingAccess);
  return guild;
}

function ownApplication(params: Params, state: EmulatorState): void {
  if (params.application_id !== state.seed.application.id) {
    throw new EmulatorError(ERRORS.missingAccess);
  }
}

function formOf(request: FastifyRequest): Record<string, string | undefined> {
  if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
    throw new EmulatorError({ status: 400, body: { error: 'invalid_request' } });
  }
  return (request.body ?? {}) as Record<string, string | undefined>;
}

/** Client authentication: HTTP Basic, or `client_id` and `client_secret` in the form. */
function clientAuthenticated(
  request: FastifyRequest,
  form: Record<string, string | undefined>,
  state: EmulatorState,
): boolean {
  const { id, secret } = state.seed.application;
  const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
  if (basic) return Buffer.from(basic[1], 'base64').toString('utf8') === `${id}:${secret}`;
  return form.client_id === id && form.client_secret === secret;
}
