import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { APIUser } from 'discord-api-types/v10';
import { DataSource } from 'typeorm';
import { GrantService } from 'src/auth/grant.service';
import { OAuth2CodeGuard } from 'src/auth/oauth2-code-guard';
import { UsersService } from 'src/users/users.service';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { type LoginOutcome, Metrics } from 'src/common/metrics/metrics';
import { AppConfig } from 'src/config/app-config';
import { OAuth2GrantError, PlatformUnavailableError } from 'src/platform/platform.errors';
import { PlatformClient } from 'src/platform/platform.client';
import type { OAuth2Grant } from 'src/platform/platform.types';
import { SessionsService, type IssuedSession } from 'src/sessions/sessions.service';

/**
 * A login must grant these. Dashboards also request `guilds.members.read` (MEMBER_READ_SCOPE), which
 * is optional: the grant's scopes are stored as granted, and its absence only means the user's own
 * member is read with the bot token (docs/authentication.md).
 */
const REQUIRED_SCOPES = ['identify', 'guilds'];

export interface Login {
  issued: IssuedSession;
  profile: APIUser;
}

/** `POST /oauth2`: the OAuth2 code exchange that creates a login session. */
@Injectable()
export class LoginService {
  constructor(
    private readonly config: AppConfig,
    private readonly codes: OAuth2CodeGuard,
    private readonly platform: PlatformClient,
    private readonly users: UsersService,
    private readonly grants: GrantService,
    private readonly sessions: SessionsService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
  ) {}

  /** Logs in, counting the outcome (`bms_logins_total`). */
  async login(code: string, redirectUri: string, codeVerifier?: string): Promise<Login> {
    try {
      const login = await this.attempt(code, redirectUri, codeVerifier);
      this.metrics.login('ok');
      return login;
    } catch (error) {
      this.metrics.login(loginOutcomeOf(error));
      throw error;
    }
  }

  private async attempt(code: string, redirectUri: string, codeVerifier?: string): Promise<Login> {
    if (!this.config.oauth2.allowedRedirects.includes(redirectUri)) {
      throw new AppException(
        ErrorCode.Restricted,
        'redirect_uri is not one of the redirect URIs this service allows',
      );
    }
    if (!(await this.codes.claim(code))) {
      throw new AppException(
        ErrorCode.BadRequest,
        'This authorization code was already used; start the login again',
      );
    }
    // The same exchange refused a moment ago is refused again without asking the platform.
    const refused = await this.codes.refusal(code, codeVerifier);
    if (refused) {
      await this.codes.release(code);
      throw new AppException(
        ErrorCode.BadRequest,
        grantRefusalMessage(new OAuth2GrantError(refused.error, refused.description), codeVerifier),
      );
    }
    const grant = await this.exchange(code, redirectUri, codeVerifier).catch(async (error) => {
      // No grant was issued, so the code is not spent: its rightful holder may still exchange it
      // with another verifier (the platform keeps refusing codes that are used or invalid). This
      // exchange itself, if refused, is not sent again (exchange remembers it).
      await this.codes.release(code);
      throw error;
    });
    await this.codes.spend(code);
    if (!REQUIRED_SCOPES.every((scope) => grant.scope.split(' ').includes(scope))) {
      await this.discard(grant);
      throw new AppException(
        ErrorCode.BadRequest,
        `The authorization must grant the scopes ${REQUIRED_SCOPES.join(' and ')}`,
      );
    }
    const profile = await this.platform.getUser(grant.access_token);
    if ((await this.users.find(profile.id))?.state === 'banned') {
      await this.discard(grant);
      throw new AppException(ErrorCode.ApiBanned, 'This account is banned from this service');
    }
    const issued = await this.dataSource.transaction(async (manager) => {
      await this.users.upsertProfile(profile, manager);
      await this.grants.store(profile.id, grant, manager);
      return this.sessions.issue(
        {
          userId: profile.id,
          type: 'login',
          name: null,
          ttlSeconds: this.config.sessions.loginSessionTtlSeconds,
        },
        manager,
      );
    });
    return { issued, profile };
  }

  /** The code's exchange; a refusal by the token endpoint is remembered, then answered 400. */
  private async exchange(
    code: string,
    redirectUri: string,
    codeVerifier: string | undefined,
  ): Promise<OAuth2Grant> {
    try {
      return await this.platform.exchangeCode(code, redirectUri, codeVerifier);
    } catch (error) {
      if (!(error instanceof OAuth2GrantError)) throw error;
      await this.codes.rememberRefusal(code, codeVerifier, {
        error: error.error,
        description: error.description,
      });
      throw new AppException(ErrorCode.BadRequest, grantRefusalMessage(error, codeVerifier));
    }
  }

  /** Revokes a grant this service will not keep (best effort). */
  private async discard(grant: OAuth2Grant): Promise<void> {
    await this.platform.revokeToken(grant.refresh_token, 'refresh_token').catch(() => undefined);
  }
}

/**
 * The platform's refusal of a code exchange in words for the API's user. Only a verifier sent for
 * a code issued without a challenge is told apart (the platform names `code_challenge`); anything
 * else means the login must start again.
 */
export function grantRefusalMessage(
  error: OAuth2GrantError,
  codeVerifier: string | undefined,
): string {
  if (codeVerifier !== undefined && /code_challenge/.test(error.description ?? '')) {
    return 'code_verifier was sent, but this code was issued without a code_challenge: exchange it without code_verifier';
  }
  return 'The authorization code is invalid or expired; start the login again';
}

/** A failed login's outcome, by the error it answers with. */
function loginOutcomeOf(error: unknown): LoginOutcome {
  // Before the codes: the platform's failures answer InternalError, as a defect does.
  if (error instanceof PlatformUnavailableError) return 'platform_error';
  if (!(error instanceof AppException)) return 'error';
  const outcomes: Partial<Record<ErrorCode, LoginOutcome>> = {
    [ErrorCode.BadRequest]: 'refused',
    [ErrorCode.Restricted]: 'restricted',
    [ErrorCode.ApiBanned]: 'banned',
    [ErrorCode.RateLimited]: 'rate_limited',
    [ErrorCode.InternalAuthError]: 'platform_error',
  };
  return outcomes[error.code] ?? 'error';
}
