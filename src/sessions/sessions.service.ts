import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Interval } from '@nestjs/schedule';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type EntityManager, MoreThan, type Repository } from 'typeorm';
import type { AuthenticatedSession, TokenScope } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { AppConfig } from 'src/config/app-config';
import { KnownTokens, MAX_KNOWN_TOKENS } from 'src/sessions/known-tokens';
import { type CachedSession, SessionCache } from 'src/sessions/session-cache';
import { SessionInvalidation } from 'src/sessions/session-invalidation';
import {
  generateSessionToken,
  hashSessionToken,
  sessionTokenKey,
  isWellFormedToken,
} from 'src/sessions/session-token';
import { SessionEntity, type SessionType } from 'src/sessions/session.entity';
import { LastLoginEndedEvent } from 'src/sessions/sessions.events';
import { Clock } from 'src/common/time/clock';

/** `last_used_at` is written at most this often per session and process. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const PURGE_INTERVAL_MS = 10 * 60_000;

export interface IssuedSession {
  session: SessionEntity;
  /** The plain token: returned once to its owner, never stored. */
  token: string;
}

interface SessionRow {
  id: string;
  user_id: string;
  type: SessionType;
  name: string | null;
  state: 'active' | 'banned';
  user_state: 'normal' | 'banned';
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
  scope_guilds: string[] | null;
  scope_permissions: string[] | null;
}

@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    @InjectRepository(SessionEntity) private readonly sessions: Repository<SessionEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cache: SessionCache,
    private readonly invalidation: SessionInvalidation,
    private readonly knownTokens: KnownTokens,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly clock: Clock,
  ) {}

  /**
   * The live session a token stands for, or null for a malformed, unknown, expired or revoked one.
   * Served from the cache when possible; throws only when the session store fails.
   */
  async authenticate(token: string): Promise<AuthenticatedSession | null> {
    if (!isWellFormedToken(token)) return null;
    const key = sessionTokenKey(token);
    const now = this.clock.nowMs();
    let entry = this.cache.get(key);
    if (entry && this.invalidation.isShared) {
      // An invalidation published before this request was sent is already in this process's
      // socket buffer: let pending I/O run once so it lands before the cached entry is trusted.
      await new Promise((resolve) => setImmediate(resolve));
      entry = this.cache.get(key);
    }
    if (!entry) {
      // Read before the lookup: a revocation landing while it runs must not be undone by caching.
      const epoch = this.cache.epoch;
      const row = await this.findLiveByTokenHash(Buffer.from(key, 'hex'));
      if (!row) {
        this.knownTokens.forget(key);
        return null;
      }
      entry = {
        session: toAuthenticated(row),
        lastUsedWrittenAt: row.last_used_at?.getTime() ?? 0,
      };
      this.cache.setIfUnchanged(key, entry, epoch);
      this.knownTokens.remember(key, row.expires_at);
    }
    return this.liveSession(entry, now);
  }

  private liveSession(entry: CachedSession, now: number): AuthenticatedSession | null {
    if (entry.session.expiresAt.getTime() <= now) return null;
    this.recordUse(entry, now);
    return entry.session;
  }

  /**
   * Whether a token is worth looking up for an address refused for failed authentications: its
   * session is cached, or it was issued or resolved live recently. Answers without database work.
   */
  async isRecognised(token: string): Promise<boolean> {
    if (!isWellFormedToken(token)) return false;
    const key = sessionTokenKey(token);
    return this.cache.get(key) !== undefined || (await this.knownTokens.has(key));
  }

  /**
   * Makes the live sessions' tokens known in this process (at boot), so that after a restart a
   * refused address still admits them. One query; a failure is logged and leaves the boot alone.
   */
  async loadKnownTokens(): Promise<void> {
    try {
      const rows: { token_hash: Buffer }[] = await this.sessions.query(
        `SELECT token_hash FROM sessions
          WHERE expires_at > now()
          ORDER BY COALESCE(last_used_at, created_at) DESC
          LIMIT $1`,
        [MAX_KNOWN_TOKENS],
      );
      this.knownTokens.load(rows.map((row) => row.token_hash.toString('hex')));
    } catch (error) {
      this.logger.warn(
        { reason: (error as Error).message },
        'Could not load the tokens of live sessions; a refused address admits only tokens seen valid since boot',
      );
    }
  }

  /** Creates a session and its token; inside the caller's transaction when one is given. */
  async issue(
    options: {
      userId: string;
      type: SessionType;
      name: string | null;
      ttlSeconds: number;
      scope?: TokenScope | null;
    },
    manager?: EntityManager,
  ): Promise<IssuedSession> {
    const token = generateSessionToken(options.type);
    const tokenHash = hashSessionToken(token);
    const repository = manager ? manager.getRepository(SessionEntity) : this.sessions;
    const session = await repository.save(
      repository.create({
        userId: options.userId,
        type: options.type,
        name: options.name,
        state: 'active',
        tokenHash,
        expiresAt: new Date(this.clock.nowMs() + options.ttlSeconds * 1000),
        lastUsedAt: null,
        scopeGuilds: options.scope?.guilds ? [...options.scope.guilds] : null,
        scopePermissions: options.scope?.permissions ? [...options.scope.permissions] : null,
      }),
    );
    // Should the caller's transaction roll back, being known only earns the token a failing lookup.
    this.knownTokens.remember(tokenHash.toString('hex'), session.expiresAt);
    return { session, token };
  }

  /**
   * A new API token for the user, within API_TOKEN_MAX_TTL and MAX_API_TOKENS_PER_USER. The
   * user's row is locked meanwhile, so concurrent requests cannot pass the cap together.
   */
  async issueApiToken(
    userId: string,
    name: string,
    ttlSeconds: number,
    scope: TokenScope | null = null,
  ): Promise<IssuedSession> {
    const { apiTokenMaxTtlSeconds, maxApiTokensPerUser } = this.config.sessions;
    if (ttlSeconds > apiTokenMaxTtlSeconds) {
      const message = `expiry must not be greater than ${apiTokenMaxTtlSeconds} seconds`;
      throw new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
        { field: 'expiry', message },
      ]);
    }
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      if ((await this.countLive(userId, 'api', manager)) >= maxApiTokensPerUser) {
        throw new AppException(
          ErrorCode.BadRequest,
          `You already have ${maxApiTokensPerUser} API tokens, the most allowed; delete one first`,
        );
      }
      return this.issue({ userId, type: 'api', name, ttlSeconds, scope }, manager);
    });
  }

  /** The user's live sessions, newest first. */
  listLive(userId: string): Promise<SessionEntity[]> {
    return this.sessions.find({
      where: { userId, expiresAt: MoreThan(this.clock.now()) },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /**
   * `GET /sessions`: the live sessions the caller may see, newest first. A scoped API token sees
   * only itself: its scope would mean little if it could read its user's other tokens (their ids,
   * names and scopes) and so learn what to ask for.
   */
  listVisibleTo(caller: AuthenticatedSession): Promise<SessionEntity[]> {
    if (caller.scope === null) return this.listLive(caller.userId);
    return this.sessions.find({
      where: { id: caller.id, userId: caller.userId, expiresAt: MoreThan(this.clock.now()) },
    });
  }

  countLive(userId: string, type: SessionType, manager?: EntityManager): Promise<number> {
    const repository = manager ? manager.getRepository(SessionEntity) : this.sessions;
    return repository.count({ where: { userId, type, expiresAt: MoreThan(this.clock.now()) } });
  }

  /**
   * Revokes one of the user's own sessions; false when there is no such session of this user.
   * The token stops working at once, here and on every other instance.
   */
  async revokeOwn(userId: string, sessionId: string): Promise<boolean> {
    const session = await this.sessions.findOne({ where: { id: sessionId, userId } });
    if (!session) return false;
    await this.sessions.delete({ id: session.id });
    await this.invalidation.sessionChanged(session.id);
    if (session.type === 'login' && (await this.countLive(userId, 'login')) === 0) {
      await this.announceLastLoginEnded(userId);
    }
    return true;
  }

  /** Bans a session (its token then gets ApiBanned); false when it does not exist. */
  async ban(sessionId: string): Promise<boolean> {
    const result = await this.sessions.update({ id: sessionId }, { state: 'banned' });
    if (!result.affected) return false;
    await this.invalidation.sessionChanged(sessionId);
    return true;
  }

  /** The revocation is done whatever a listener does: its failure is logged, not answered. */
  private async announceLastLoginEnded(userId: string): Promise<void> {
    try {
      await this.events.emitAsync(LastLoginEndedEvent.event, new LastLoginEndedEvent(userId));
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'A last-login listener failed');
    }
  }

  /** Deletes expired sessions; they are never accepted meanwhile (the lookup filters them). */
  @Interval('purge-expired-sessions', PURGE_INTERVAL_MS)
  async purgeExpired(): Promise<number> {
    try {
      const result = await this.sessions
        .createQueryBuilder()
        .delete()
        .where('expires_at <= now()')
        .execute();
      const purged = result.affected ?? 0;
      if (purged > 0) this.logger.log({ purged }, 'Purged expired sessions');
      return purged;
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Purging expired sessions failed');
      return 0;
    }
  }

  private async findLiveByTokenHash(tokenHash: Buffer): Promise<SessionRow | undefined> {
    const rows: SessionRow[] = await this.sessions.query(
      `SELECT s.id, s.user_id, s.type, s.name, s.state, u.state AS user_state,
              s.created_at, s.expires_at, s.last_used_at, s.scope_guilds, s.scope_permissions
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.expires_at > now()`,
      [tokenHash],
    );
    return rows[0];
  }

  /** Writes `last_used_at` at most once a minute per session; never delays the request. */
  private recordUse(entry: CachedSession, now: number): void {
    if (now - entry.lastUsedWrittenAt < LAST_USED_WRITE_INTERVAL_MS) return;
    entry.lastUsedWrittenAt = now;
    this.sessions
      .update({ id: entry.session.id }, { lastUsedAt: new Date(now) })
      .catch((error: Error) => {
        this.logger.debug({ reason: error.message }, 'Could not record session use');
      });
  }
}

function toAuthenticated(row: SessionRow): AuthenticatedSession {
  return {
    id: row.id,
    userId: row.user_id,
    type: row.type,
    name: row.name,
    state: row.state,
    userState: row.user_state,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    scope: scopeOf(row.scope_guilds, row.scope_permissions),
  };
}

/** A stored scope (its two columns), or null when the session has none. */
export function scopeOf(
  guilds: string[] | null,
  permissions: string[] | null,
): { guilds: string[] | null; permissions: string[] | null } | null {
  return guilds === null && permissions === null ? null : { guilds, permissions };
}
