import { Clock } from 'src/common/time/clock';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Logger } from '@nestjs/common';
import type { DataSource, Repository } from 'typeorm';
import type { RedisBroadcasts } from 'src/common/redis/redis-broadcast';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { AppConfig } from 'src/config/app-config';
import { KnownTokens } from 'src/sessions/known-tokens';
import { SessionCache } from 'src/sessions/session-cache';
import { SessionInvalidation } from 'src/sessions/session-invalidation';
import { generateSessionToken, hashSessionToken } from 'src/sessions/session-token';
import type { SessionEntity } from 'src/sessions/session.entity';
import { LastLoginEndedEvent } from 'src/sessions/sessions.events';
import { SessionsService } from 'src/sessions/sessions.service';

const ROW = {
  id: '0b6f3a52-6c1e-4d55-9a49-1f2e6c7d8e90',
  user_id: '42',
  type: 'login',
  name: null,
  state: 'active',
  user_state: 'normal',
  created_at: new Date('2025-01-01T00:00:00Z'),
  expires_at: new Date(Date.now() + 3_600_000),
  last_used_at: new Date(),
};

/** A promise the test settles when it chooses: the database answering a query. */

/** Channels between instances: shared (Redis configured, publishing succeeds) or not. */
function broadcasts(shared: boolean): RedisBroadcasts {
  return {
    open: () => ({ isShared: shared, publish: () => Promise.resolve(shared) }),
  } as unknown as RedisBroadcasts;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** `shared`: instances share invalidations (a Redis client, here one that only publishes). */
function setUp({ shared = false }: { shared?: boolean } = {}): {
  service: SessionsService;
  invalidation: SessionInvalidation;
  query: jest.Mock<Promise<unknown[]>, [string, unknown[]]>;
  clock: Clock;
} {
  const query = jest.fn<Promise<unknown[]>, [string, unknown[]]>();
  const repository = { query, update: jest.fn(() => Promise.resolve()) };
  const config = { redisKeyPrefix: 'test:' } as AppConfig;
  const redis = { client: null } as RedisConnection;
  const clock = new Clock();
  const cache = new SessionCache();
  const invalidation = new SessionInvalidation(cache, broadcasts(shared), new EventEmitter2());
  invalidation.onModuleInit();
  const service = new SessionsService(
    repository as unknown as Repository<SessionEntity>,
    {} as DataSource,
    cache,
    invalidation,
    new KnownTokens(redis, config, clock),
    config,
    new EventEmitter2(),
    clock,
  );
  return { service, invalidation, query, clock };
}

describe('SessionsService.authenticate and invalidations', () => {
  it('serves a resolved session from the cache afterwards (no second lookup)', async () => {
    const { service, query } = setUp();
    const token = generateSessionToken('login');
    query.mockResolvedValueOnce([ROW]).mockResolvedValue([]);
    expect(await service.authenticate(token)).toMatchObject({ id: ROW.id });
    expect(await service.authenticate(token)).toMatchObject({ id: ROW.id });
    expect(query).toHaveBeenCalledTimes(1);
  });

  it.each([
    [
      'the session is revoked',
      (invalidation: SessionInvalidation) => invalidation.sessionChanged(ROW.id),
    ],
    [
      'its user is banned',
      (invalidation: SessionInvalidation) => invalidation.userChanged(ROW.user_id),
    ],
  ])('does not cache a lookup that was in flight when %s', async (_when, invalidate) => {
    const { service, invalidation, query } = setUp();
    const token = generateSessionToken('login');
    const lookup = deferred<unknown[]>();
    query.mockReturnValueOnce(lookup.promise).mockResolvedValue([]);

    const inFlight = service.authenticate(token);
    await invalidate(invalidation);
    lookup.resolve([ROW]);
    // The request raced the change: it may be answered with what the database said then.
    expect(await inFlight).toMatchObject({ id: ROW.id });
    // But the next request looks again, and the revoked session is gone.
    expect(await service.authenticate(token)).toBeNull();
    expect(query).toHaveBeenCalledTimes(2);
  });
});

describe('SessionsService.authenticate from the cache', () => {
  it('refuses a malformed token without a lookup', async () => {
    const { service, query } = setUp();
    expect(await service.authenticate('arl_short')).toBeNull();
    expect(query).not.toHaveBeenCalled();
  });

  it('refuses a cached session that has expired since, without a lookup', async () => {
    const { service, query, clock } = setUp();
    const token = generateSessionToken('login');
    query.mockResolvedValueOnce([ROW]);
    expect(await service.authenticate(token)).not.toBeNull();
    jest.spyOn(clock, 'nowMs').mockReturnValue(ROW.expires_at.getTime());
    expect(await service.authenticate(token)).toBeNull();
    expect(query).toHaveBeenCalledTimes(1);
  });

  it('looks a revoked session up again', async () => {
    const { service, invalidation, query } = setUp();
    const token = generateSessionToken('login');
    query.mockResolvedValueOnce([ROW]).mockResolvedValue([]);
    await service.authenticate(token);
    await invalidation.sessionChanged(ROW.id);
    expect(await service.authenticate(token)).toBeNull();
    expect(query).toHaveBeenCalledTimes(2);
  });

  it('lets pending I/O run before trusting the cache when instances share invalidations', async () => {
    const { service, invalidation, query } = setUp({ shared: true });
    const token = generateSessionToken('login');
    query.mockResolvedValueOnce([ROW]).mockResolvedValue([]);
    await service.authenticate(token);
    // An invalidation from another instance, already waiting when the request comes in.
    setImmediate(() => void invalidation.sessionChanged(ROW.id));
    expect(await service.authenticate(token)).toBeNull();
    expect(query).toHaveBeenCalledTimes(2);
  });
});

describe('tokens seen valid (for addresses refused for failed authentications)', () => {
  it('stay known however long ago they were seen', async () => {
    const { service, query } = setUp();
    const token = generateSessionToken('api');
    query.mockResolvedValueOnce([ROW]);
    await service.authenticate(token);
    // A day and more later (lru-cache reads the clock through performance.now).
    const later = performance.now() + 400 * 86_400_000;
    const clock = jest.spyOn(performance, 'now').mockReturnValue(later);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { service: fresh } = setUp();
    expect(await fresh.isRecognised(token)).toBe(false);
    expect(await service.isRecognised(token)).toBe(true);
    clock.mockRestore();
  });

  it('are loaded at boot from the live sessions, most recently used first, up to the bound', async () => {
    const { service, query } = setUp();
    const [used, issued] = [generateSessionToken('login'), generateSessionToken('api')];
    query.mockResolvedValueOnce([
      { token_hash: hashSessionToken(used) },
      { token_hash: hashSessionToken(issued) },
    ]);
    await service.loadKnownTokens();
    expect(query).toHaveBeenCalledTimes(1);
    const [sql, parameters] = query.mock.calls[0];
    expect(sql).toMatch(
      /WHERE expires_at > now\(\)\s+ORDER BY COALESCE\(last_used_at, created_at\) DESC\s+LIMIT \$1/,
    );
    expect(parameters).toEqual([100_000]);
    expect(await service.isRecognised(used)).toBe(true);
    expect(await service.isRecognised(issued)).toBe(true);
    expect(await service.isRecognised(generateSessionToken('api'))).toBe(false);
  });

  it('do not fail the boot when they cannot be loaded', async () => {
    const { service, query } = setUp();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    query.mockRejectedValueOnce(new Error('connection refused'));
    await expect(service.loadKnownTokens()).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      { reason: 'connection refused' },
      'Could not load the tokens of live sessions; a refused address admits only tokens seen valid since boot',
    );
    warn.mockRestore();
  });
});

/** SessionsService over an in-memory table of sessions, with the events it announces recorded. */
function withSessions(rows: Partial<SessionEntity>[]): {
  service: SessionsService;
  events: EventEmitter2;
  announced: unknown[];
} {
  const table = [...rows];
  const matches = (row: Partial<SessionEntity>, where: Record<string, unknown>): boolean =>
    Object.entries(where).every(
      ([key, value]) =>
        (typeof value === 'object' && value !== null) || row[key as keyof SessionEntity] === value,
    );
  const repository = {
    findOne: ({ where }: { where: Record<string, unknown> }) =>
      Promise.resolve(table.find((row) => matches(row, where)) ?? null),
    delete: ({ id }: { id: string }) => {
      table.splice(
        table.findIndex((row) => row.id === id),
        1,
      );
      return Promise.resolve({ affected: 1 });
    },
    count: ({ where }: { where: Record<string, unknown> }) =>
      Promise.resolve(table.filter((row) => matches(row, where)).length),
  };
  const config = {
    redisKeyPrefix: 'test:',
    sessions: { apiTokenMaxTtlSeconds: 3600 },
  } as AppConfig;
  const redis = { client: null } as RedisConnection;
  const clock = new Clock();
  const events = new EventEmitter2();
  const announced: unknown[] = [];
  events.onAny((_event, value) => void announced.push(value));
  const service = new SessionsService(
    repository as unknown as Repository<SessionEntity>,
    {} as DataSource,
    new SessionCache(),
    new SessionInvalidation(new SessionCache(), broadcasts(false), new EventEmitter2()),
    new KnownTokens(redis, config, clock),
    config,
    events,
    clock,
  );
  return { service, events, announced };
}

describe('revoking one of your own sessions', () => {
  const login = (id: string): Partial<SessionEntity> => ({ id, userId: '42', type: 'login' });

  it("announces the end of the user's last login, so the platform grant is retired", async () => {
    const { service, announced } = withSessions([
      login('a'),
      { id: 't', userId: '42', type: 'api' },
    ]);
    await expect(service.revokeOwn('42', 'a')).resolves.toBe(true);
    expect(announced).toEqual([new LastLoginEndedEvent('42')]);
  });

  it('announces nothing while another login remains, or for an API token', async () => {
    const { service, announced } = withSessions([
      login('a'),
      login('b'),
      { id: 't', userId: '42', type: 'api' },
    ]);
    await service.revokeOwn('42', 'a');
    await service.revokeOwn('42', 't');
    expect(announced).toEqual([]);
  });

  it('revokes the session even when a listener fails, and logs the failure', async () => {
    const { service, events } = withSessions([login('a')]);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    events.on(LastLoginEndedEvent.event, () => {
      throw new Error('grant store down');
    });
    await expect(service.revokeOwn('42', 'a')).resolves.toBe(true);
    expect(warn).toHaveBeenCalledWith(
      { reason: 'grant store down' },
      'A last-login listener failed',
    );
    warn.mockRestore();
  });

  it("refuses someone else's session, changing nothing", async () => {
    const { service, announced } = withSessions([login('a')]);
    await expect(service.revokeOwn('43', 'a')).resolves.toBe(false);
    expect(announced).toEqual([]);
  });
});

describe('issuing an API token', () => {
  it('refuses an expiry beyond API_TOKEN_MAX_TTL, naming the field', async () => {
    const { service } = withSessions([]);
    await expect(service.issueApiToken('42', 'script', 3601)).rejects.toMatchObject({
      code: 'BadRequest',
      message: 'Invalid request: expiry must not be greater than 3600 seconds',
      details: [{ field: 'expiry', message: 'expiry must not be greater than 3600 seconds' }],
    });
  });
});
