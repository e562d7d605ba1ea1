import type {
  APIApplicationCommand,
  APIGuild,
  APIGuildMember,
  APIUser,
  RESTAPIPartialCurrentUserGuild,
  RESTGetAPIGuildChannelsResult,
  RESTGetAPIGuildThreadsResult,
  RESTPutAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { PlatformAnswer, PlatformCall, PlatformHttp } from 'src/platform/platform-http';
import {
  readActiveThreads,
  readChannels,
  readGuild,
  readGuildList,
  readMember,
  readUser,
} from 'src/platform/platform-answers';
import {
  OAuth2GrantError,
  PlatformRequestError,
  PlatformUnauthorizedError,
  PlatformUnavailableError,
} from 'src/platform/platform.errors';
import type { Lookup, MissingEntity, OAuth2Grant, PlatformAuth } from 'src/platform/platform.types';

// The user's member lookup fails with it on a 429; other modules reach it through the client.
export { PlatformRateLimitedError } from 'src/platform/platform-http';

/** The platform's JSON error codes that mean "not found" here. */
const MISSING_BY_CODE: Readonly<Record<number, MissingEntity>> = {
  10003: 'channel',
  10004: 'guild',
  10007: 'member',
  10013: 'user',
};
/** 403 "Missing Access": what the platform answers for a guild the bot is not in. */
const MISSING_ACCESS = 50001;
/** The platform's page size for guild lists. */
export const GUILD_PAGE = 200;
/**
 * The user's own member lookup waits out no rate limit: its caller has the bot's lookup to fall
 * back on, and a user's limits on this route are strict and unpublished (docs/authentication.md).
 */
const USER_MEMBER_RATE_LIMIT = { retries: 0, maxWaitMs: 0 };

/**
 * The platform refused a user's token on a route that needs a scope (403): the grant does not
 * carry the scope, whatever its stored scopes say. The token itself is still good.
 */
export class PlatformScopeRefusedError extends Error {
  constructor(
    readonly route: string,
    readonly platformCode: number | undefined,
  ) {
    super(`${route}: the platform refused the user token's scope (403)`);
    this.name = 'PlatformScopeRefusedError';
  }
}

/**
 * The chat platform's REST API: exactly the routes this service uses (docs/platform.md), on the bot
 * token, a user's OAuth2 token or the OAuth2 client credentials.
 */
export class PlatformClient {
  constructor(
    private readonly http: PlatformHttp,
    private readonly applicationId: string,
  ) {}

  // --- OAuth2 -----------------------------------------------------------------------------------

  /** With `codeVerifier` for a code issued with a PKCE challenge (RFC 7636). */
  exchangeCode(code: string, redirectUri: string, codeVerifier?: string): Promise<OAuth2Grant> {
    return this.tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
    });
  }

  refreshGrant(refreshToken: string): Promise<OAuth2Grant> {
    return this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /** Revokes the whole authorization the token belongs to. */
  async revokeToken(token: string, hint: 'access_token' | 'refresh_token'): Promise<void> {
    const call = this.call('POST', '/oauth2/token/revoke', '/oauth2/token/revoke', {
      kind: 'client',
    });
    const answer = await this.http.send({ ...call, form: { token, token_type_hint: hint } });
    this.expectOk(call, answer);
  }

  // --- Users ------------------------------------------------------------------------------------

  async getBotUser(): Promise<APIUser> {
    const call = this.call('GET', '/users/@me', '/users/@me', { kind: 'bot' });
    return readUser(call.route, this.expectOk(call, await this.http.send(call)));
  }

  /** The user behind an OAuth2 access token (scope `identify`). */
  async getUser(accessToken: string): Promise<APIUser> {
    const call = this.call('GET', '/users/@me', '/users/@me', {
      kind: 'bearer',
      token: accessToken,
    });
    return readUser(call.route, this.expectOk(call, await this.http.send(call)));
  }

  /** The guilds of the user behind an OAuth2 access token (scope `guilds`; at most 200). */
  async getUserGuilds(accessToken: string): Promise<RESTAPIPartialCurrentUserGuild[]> {
    return this.guildPage({ kind: 'bearer', token: accessToken }, undefined, GUILD_PAGE);
  }

  /**
   * The user's own member in a guild, with the user's OAuth2 access token (scope
   * `guilds.members.read`): the user's rate limits, not the bot's. A guild the user is not in
   * (the platform says "unknown guild" or "unknown member") is `{found: false, missing: 'member'}`:
   * the user cannot tell whether the bot is there. A 401 is `PlatformUnauthorizedError` (the grant
   * is dead), a 403 `PlatformScopeRefusedError`, and a 429 fails at once with
   * `PlatformRateLimitedError` instead of waiting (USER_MEMBER_RATE_LIMIT).
   */
  async getCurrentUserGuildMember(
    accessToken: string,
    guildId: string,
  ): Promise<Lookup<APIGuildMember>> {
    const path: PlatformCall['path'] = `/users/@me/guilds/${encodeURIComponent(guildId)}/member`;
    const call: PlatformCall = {
      ...this.call('GET', '/users/@me/guilds/:guild_id/member', path, {
        kind: 'bearer',
        token: accessToken,
      }),
      rateLimit: USER_MEMBER_RATE_LIMIT,
    };
    const answer = await this.http.send(call);
    if (answer.status === 200) return { found: true, value: readMember(call.route, answer.body) };
    const code = platformCode(answer);
    const missing = code === undefined ? undefined : MISSING_BY_CODE[code];
    if (answer.status === 404 && (missing === 'guild' || missing === 'member')) {
      return { found: false, missing: 'member' };
    }
    if (answer.status === 403) throw new PlatformScopeRefusedError(call.route, code);
    return this.refuse(call, answer);
  }

  /**
   * One page of the bot's guilds (sorted by id, as the platform serves them) from `firstId` upward:
   * up to `limit` (at most GUILD_PAGE) guilds whose id is at least `firstId`.
   */
  getBotGuildsFrom(firstId: string, limit: number): Promise<RESTAPIPartialCurrentUserGuild[]> {
    const after = BigInt(firstId) - 1n;
    // "after=-1" is not an id: from 0 (the smallest id), no "after" is needed at all.
    return this.guildPage({ kind: 'bot' }, after < 0n ? undefined : after.toString(), limit);
  }

  // --- Guilds (bot token) -----------------------------------------------------------------------

  /** The guild with its roles; not found when it does not exist or the bot is not in it. */
  getGuild(guildId: string): Promise<Lookup<APIGuild>> {
    const path: PlatformCall['path'] = `/guilds/${encodeURIComponent(guildId)}`;
    return this.lookup(this.call('GET', '/guilds/:guild_id', path, { kind: 'bot' }), readGuild);
  }

  /** The guild's channels (without threads, as the platform serves them). */
  getGuildChannels(guildId: string): Promise<Lookup<RESTGetAPIGuildChannelsResult>> {
    const path: PlatformCall['path'] = `/guilds/${encodeURIComponent(guildId)}/channels`;
    const call = this.call('GET', '/guilds/:guild_id/channels', path, { kind: 'bot' });
    return this.lookup(call, readChannels);
  }

  /** The guild's active threads (the channel list does not include threads). */
  getActiveThreads(guildId: string): Promise<Lookup<RESTGetAPIGuildThreadsResult>> {
    const path: PlatformCall['path'] = `/guilds/${encodeURIComponent(guildId)}/threads/active`;
    const call = this.call('GET', '/guilds/:guild_id/threads/active', path, { kind: 'bot' });
    return this.lookup(call, readActiveThreads);
  }

  /** `own`: the bot's own member (see PlatformCall.ownMember). */
  getGuildMember(guildId: string, userId: string, own = false): Promise<Lookup<APIGuildMember>> {
    const path: PlatformCall['path'] = `/guilds/${encodeURIComponent(guildId)}/members/${encodeURIComponent(userId)}`;
    const call = this.call('GET', '/guilds/:guild_id/members/:user_id', path, { kind: 'bot' });
    return this.lookup(own ? { ...call, ownMember: true } : call, readMember);
  }

  // --- Application commands ---------------------------------------------------------------------

  async getCommands(): Promise<APIApplicationCommand[]> {
    const call = this.commandsCall('GET');
    return this.expectOk(call, await this.http.send(call)) as APIApplicationCommand[];
  }

  /** Replaces every global command of the application (bulk overwrite). */
  async putCommands(
    commands: RESTPutAPIApplicationCommandsJSONBody,
  ): Promise<APIApplicationCommand[]> {
    const call = { ...this.commandsCall('PUT'), json: commands };
    return this.expectOk(call, await this.http.send(call)) as APIApplicationCommand[];
  }

  // --- Helpers ----------------------------------------------------------------------------------

  private call(
    method: PlatformCall['method'],
    route: string,
    path: PlatformCall['path'],
    auth: PlatformAuth,
  ): PlatformCall {
    return { method, route, path, auth };
  }

  private commandsCall(method: 'GET' | 'PUT'): PlatformCall {
    const path: PlatformCall['path'] = `/applications/${encodeURIComponent(this.applicationId)}/commands`;
    return this.call(method, '/applications/:application_id/commands', path, { kind: 'bot' });
  }

  private async guildPage(
    auth: PlatformAuth,
    after: string | undefined,
    limit: number,
  ): Promise<RESTAPIPartialCurrentUserGuild[]> {
    const call: PlatformCall = {
      ...this.call('GET', '/users/@me/guilds', '/users/@me/guilds', auth),
      query: { limit: String(limit), ...(after ? { after } : {}) },
    };
    return readGuildList(call.route, this.expectOk(call, await this.http.send(call)));
  }

  private async tokenRequest(form: Record<string, string>): Promise<OAuth2Grant> {
    const call = {
      ...this.call('POST', '/oauth2/token', '/oauth2/token', { kind: 'client' }),
      form,
    };
    const answer = await this.http.send(call);
    if (answer.status === 200) return answer.body as OAuth2Grant;
    const { error, error_description } = (answer.body ?? {}) as {
      error?: string;
      error_description?: string;
    };
    if (error === 'invalid_client' || answer.status === 401) {
      throw new PlatformUnavailableError('OAuth2 client credentials were refused (invalid_client)');
    }
    if (typeof error === 'string') throw new OAuth2GrantError(error, error_description);
    throw new PlatformRequestError(call.route, answer.status, undefined);
  }

  /** `read` checks a 200 answer (platform-answers.ts). */
  private async lookup<T>(
    call: PlatformCall,
    read: (route: string, body: unknown) => T,
  ): Promise<Lookup<T>> {
    const answer = await this.http.send(call);
    if (answer.status === 200) return { found: true, value: read(call.route, answer.body) };
    const code = platformCode(answer);
    if (answer.status === 404 && code !== undefined && MISSING_BY_CODE[code]) {
      return { found: false, missing: MISSING_BY_CODE[code] };
    }
    if (answer.status === 403 && code === MISSING_ACCESS) return { found: false, missing: 'guild' };
    return this.refuse(call, answer);
  }

  private expectOk(call: PlatformCall, answer: PlatformAnswer): unknown {
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    return this.refuse(call, answer);
  }

  /** A refusal this call cannot turn into a result. */
  private refuse(call: PlatformCall, answer: PlatformAnswer): never {
    if (answer.status === 401) {
      if (call.auth.kind === 'bearer') throw new PlatformUnauthorizedError();
      // The bot token or the client credentials are wrong: nothing a client of ours can fix.
      throw new PlatformUnavailableError(`${call.method} ${call.route}: credentials refused (401)`);
    }
    throw new PlatformRequestError(
      `${call.method} ${call.route}`,
      answer.status,
      platformCode(answer),
    );
  }
}

function platformCode(answer: PlatformAnswer): number | undefined {
  const code = (answer.body as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
