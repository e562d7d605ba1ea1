import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { TokenCipher } from 'src/auth/token-cipher';
import { UserEntity } from 'src/users/user.entity';
import { SingleFlight } from 'src/common/async/single-flight';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { acquireRedisLock, type ReleaseLock } from 'src/common/redis/redis-lock';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';
import { OAuth2GrantError, PlatformUnauthorizedError } from 'src/platform/platform.errors';
import { PlatformClient } from 'src/platform/platform.client';
import type { OAuth2Grant } from 'src/platform/platform.types';
import { LastLoginEndedEvent } from 'src/sessions/sessions.events';
import { Clock } from 'src/common/time/clock';

/** An access token this close to expiry is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;
/** Cross-instance refresh lock: held at most this long, waited for at most this long. */
const LOCK_TTL_MS = 15_000;
const LOCK_WAIT_MS = 15_000;
const LOCK_POLL_MS = 100;

/**
 * The scope that lets a user's own token read the user's member in a guild
 * (`GET /users/@me/guilds/{id}/member`). Dashboards request it; a login may lack it
 * (docs/authentication.md).
 */
export const MEMBER_READ_SCOPE = 'guilds.members.read';

const RELOGIN_MESSAGE = 'Your Discord authorization has expired or was revoked; log in again';

/**
 * The users' platform OAuth2 grants: stored encrypted, refreshed when expired (one refresh at a
 * time per user, in this process and, with Redis, across instances), retired when the platform
 * refuses them or the user's last login session ends.
 */
@Injectable()
export class GrantService {
  private readonly logger = new Logger(GrantService.name);
  private readonly refreshing = new SingleFlight<string>();

  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly cipher: TokenCipher,
    private readonly platform: PlatformClient,
    private readonly redis: RedisConnection,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** A grant outlives no login: when the user's last login session ends, it is revoked. */
  @OnEvent(LastLoginEndedEvent.event, { suppressErrors: false })
  async onLastLoginEnded({ userId }: LastLoginEndedEvent): Promise<void> {
    try {
      await this.revoke(userId);
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Could not retire an ended grant');
    }
  }

  /** Stores a new grant for the user (inside the login transaction). */
  async store(userId: string, grant: OAuth2Grant, manager: EntityManager): Promise<void> {
    await manager.getRepository(UserEntity).update({ id: userId }, this.encrypted(userId, grant));
  }

  /**
   * A platform access token of the user that is valid now, refreshed first if it has expired.
   * Throws 403 `Restricted` ("log in again") when the user has no usable grant.
   */
  async accessTokenFor(userId: string): Promise<string> {
    return this.accessTokenOf(userId, await this.findUser(userId));
  }

  /**
   * Calls the platform with the user's access token. When the platform refuses the token (revoked
   * by the user, or expired early), the grant is retired and the caller gets 403 "log in again".
   */
  async withAccessToken<T>(userId: string, call: (accessToken: string) => Promise<T>): Promise<T> {
    const accessToken = await this.accessTokenFor(userId);
    try {
      return await call(accessToken);
    } catch (error) {
      if (!(error instanceof PlatformUnauthorizedError)) throw error;
      await this.retire(userId);
      throw new AppException(ErrorCode.Restricted, RELOGIN_MESSAGE);
    }
  }

  /**
   * As `withAccessToken`, for a call the user's token is one way among others to make: undefined
   * instead of 403 when the user holds no live grant carrying `scope` (none: a user known only
   * from an API token, or whose logins have all ended; a dead one; one without the scope; one the
   * platform will not refresh, which is retired) or when the platform refuses the token during the
   * call (the grant is retired, as `withAccessToken` does). Other failures pass through.
   */
  async withScopedAccessToken<T>(
    userId: string,
    scope: string,
    call: (accessToken: string) => Promise<T>,
  ): Promise<T | undefined> {
    const user = await this.findUser(userId);
    if (!user || !hasGrant(user) || !user.grantScopes?.split(' ').includes(scope)) return undefined;
    let accessToken: string;
    try {
      accessToken = await this.accessTokenOf(userId, user);
    } catch (error) {
      // The refresh was refused (the grant is retired now), or another instance retired it.
      if (error instanceof AppException && error.code === ErrorCode.Restricted) return undefined;
      throw error;
    }
    try {
      return await call(accessToken);
    } catch (error) {
      if (!(error instanceof PlatformUnauthorizedError)) throw error;
      await this.retire(userId);
      return undefined;
    }
  }

  /** Revokes the user's grant at the platform (best effort) and forgets it. */
  async revoke(userId: string): Promise<void> {
    const user = await this.users.findOne({ where: { id: userId } });
    if (user?.grantRefreshToken) {
      try {
        const refreshToken = this.cipher.decrypt(user.grantRefreshToken, `${userId}:refresh`);
        await this.platform.revokeToken(refreshToken, 'refresh_token');
      } catch (error) {
        this.logger.warn({ reason: (error as Error).message }, 'Could not revoke a platform grant');
      }
    }
    await this.retire(userId);
  }

  private findUser(userId: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id: userId } });
  }

  /** The user's valid access token, refreshed first (once for all callers) if it has expired. */
  private async accessTokenOf(userId: string, user: UserEntity | null): Promise<string> {
    const current = this.validAccessToken(userId, user);
    if (current) return current;
    return this.refreshing.run(userId, () => this.refreshWithLock(userId));
  }

  /** The stored access token while it is valid, null once it expires; throws without a grant. */
  private validAccessToken(userId: string, user: UserEntity | null): string | null {
    if (!user || !hasGrant(user)) throw new AppException(ErrorCode.Restricted, RELOGIN_MESSAGE);
    if ((user.grantExpiresAt?.getTime() ?? 0) - REFRESH_MARGIN_MS <= this.clock.nowMs())
      return null;
    return this.cipher.decrypt(user.grantAccessToken, `${userId}:access`);
  }

  private async refreshWithLock(userId: string): Promise<string> {
    const release = await this.lock(userId);
    try {
      // Another instance may have refreshed while this one waited for the lock.
      const fresh = this.validAccessToken(userId, await this.findUser(userId));
      if (fresh) return fresh;
      return await this.refresh(userId);
    } finally {
      await release();
    }
  }

  private async refresh(userId: string): Promise<string> {
    const user = await this.users.findOneOrFail({ where: { id: userId } });
    const refreshToken = this.cipher.decrypt(user.grantRefreshToken as Buffer, `${userId}:refresh`);
    let grant: OAuth2Grant;
    try {
      grant = await this.platform.refreshGrant(refreshToken);
    } catch (error) {
      if (error instanceof OAuth2GrantError) {
        await this.retire(userId);
        throw new AppException(ErrorCode.Restricted, RELOGIN_MESSAGE);
      }
      throw error;
    }
    await this.users.update({ id: userId }, this.encrypted(userId, grant));
    return grant.access_token;
  }

  private encrypted(userId: string, grant: OAuth2Grant): Partial<UserEntity> {
    return {
      grantAccessToken: this.cipher.encrypt(grant.access_token, `${userId}:access`),
      grantRefreshToken: this.cipher.encrypt(grant.refresh_token, `${userId}:refresh`),
      grantExpiresAt: new Date(this.clock.nowMs() + grant.expires_in * 1000),
      grantScopes: grant.scope,
      grantState: 'active',
    };
  }

  /** Drops the stored tokens and marks the grant dead: the user must log in again. */
  private async retire(userId: string): Promise<void> {
    await this.users.update(
      { id: userId },
      { grantAccessToken: null, grantRefreshToken: null, grantExpiresAt: null, grantState: 'dead' },
    );
  }

  /**
   * A per-user lock across instances (Redis SET NX PX); without Redis (one instance) the in-process
   * single flight in `accessTokenFor` is the lock. Fails open if Redis is unreachable.
   */
  private async lock(userId: string): Promise<ReleaseLock> {
    const client = this.redis.client;
    if (!client) return () => Promise.resolve();
    const key = `${this.config.redisKeyPrefix}grant-refresh:${userId}`;
    try {
      return await acquireRedisLock(client, key, {
        ttlMs: LOCK_TTL_MS,
        waitMs: LOCK_WAIT_MS,
        pollMs: LOCK_POLL_MS,
      });
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Refresh lock unavailable');
      return () => Promise.resolve();
    }
  }
}

/** A user holding a grant that may be used (refreshed first if it has expired). */
type WithGrant = UserEntity & { grantAccessToken: Buffer; grantRefreshToken: Buffer };

function hasGrant(user: UserEntity): user is WithGrant {
  return (
    user.grantAccessToken !== null && user.grantRefreshToken !== null && user.grantState !== 'dead'
  );
}
