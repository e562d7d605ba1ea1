import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { GrantService } from 'src/auth/grant.service';
import { TokenCipher } from 'src/auth/token-cipher';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { Clock } from 'src/common/time/clock';
import type { AppConfig } from 'src/config/app-config';
import { OAuth2GrantError, PlatformUnauthorizedError } from 'src/platform/platform.errors';
import type { PlatformClient } from 'src/platform/platform.client';
import type { OAuth2Grant } from 'src/platform/platform.types';
import { LastLoginEndedEvent } from 'src/sessions/sessions.events';
import type { UserEntity } from 'src/users/user.entity';

const USER = '1100000000000000010';
const NOW = Date.parse('2026-11-23T12:00:00Z');

const grant = (access: string, refresh: string, expiresIn = 3600): OAuth2Grant => ({
  access_token: access,
  token_type: 'Bearer',
  expires_in: expiresIn,
  refresh_token: refresh,
  scope: 'identify guilds',
});

interface Harness {
  service: GrantService;
  platform: {
    refreshGrant: jest.Mock<Promise<OAuth2Grant>, [string]>;
    revokeToken: jest.Mock<Promise<void>, [string, string]>;
  };
  rows: Map<string, Partial<UserEntity>>;
  store: (access: string, refresh: string, expiresIn: number) => Promise<void>;
}

/** GrantService with its real cipher, an in-memory user table and a scripted platform. */
function setUp(): Harness {
  const rows = new Map<string, Partial<UserEntity>>([[USER, { id: USER, grantState: 'active' }]]);
  const users = {
    findOne: ({ where }: { where: { id: string } }) => Promise.resolve(rows.get(where.id) ?? null),
    findOneOrFail: ({ where }: { where: { id: string } }) => {
      const row = rows.get(where.id);
      return row ? Promise.resolve(row) : Promise.reject(new Error('no such user'));
    },
    update: ({ id }: { id: string }, values: Partial<UserEntity>) => {
      rows.set(id, { ...rows.get(id), ...values });
      return Promise.resolve({ affected: 1 });
    },
  };
  const platform = {
    refreshGrant: jest.fn<Promise<OAuth2Grant>, [string]>(),
    revokeToken: jest.fn<Promise<void>, [string, string]>(() => Promise.resolve()),
  };
  const config = { tokenEncryptionKey: randomBytes(32), redisKeyPrefix: 'test:' } as AppConfig;
  const clock: Clock = { now: () => new Date(NOW), nowMs: () => NOW };
  const cipher = new TokenCipher(config);
  const service = new GrantService(
    users as unknown as Repository<UserEntity>,
    cipher,
    platform as unknown as PlatformClient,
    { client: null } as RedisConnection,
    config,
    clock,
  );
  /** Stores a grant as a login does, expiring `expiresIn` seconds from now. */
  const store = async (access: string, refresh: string, expiresIn: number): Promise<void> => {
    const manager = { getRepository: () => users };
    await service.store(USER, grant(access, refresh, expiresIn), manager as never);
  };
  return { service, platform, rows, store };
}

describe('GrantService', () => {
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it('stores a grant encrypted and hands back the access token while it is valid', async () => {
    const { service, platform, rows, store } = setUp();
    await store('access-1', 'refresh-1', 3600);
    expect(rows.get(USER)?.grantAccessToken?.toString('utf8')).not.toContain('access-1');
    expect(rows.get(USER)?.grantExpiresAt).toEqual(new Date(NOW + 3_600_000));
    await expect(service.accessTokenFor(USER)).resolves.toBe('access-1');
    expect(platform.refreshGrant).not.toHaveBeenCalled();
  });

  it('refreshes an expiring grant once for concurrent callers, and stores the new one', async () => {
    const { service, platform, store } = setUp();
    await store('old', 'refresh-1', 30);
    platform.refreshGrant.mockResolvedValue(grant('new', 'refresh-2'));
    const tokens = await Promise.all([1, 2, 3].map(() => service.accessTokenFor(USER)));
    expect(tokens).toEqual(['new', 'new', 'new']);
    expect(platform.refreshGrant).toHaveBeenCalledTimes(1);
    expect(platform.refreshGrant).toHaveBeenCalledWith('refresh-1');
    await expect(service.accessTokenFor(USER)).resolves.toBe('new');
  });

  it('retires a grant the platform will not refresh, and asks for a new login', async () => {
    const { service, platform, rows, store } = setUp();
    await store('old', 'refresh-1', 0);
    platform.refreshGrant.mockRejectedValue(new OAuth2GrantError('invalid_grant'));
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({
      code: 'Restricted',
      message: 'Your Discord authorization has expired or was revoked; log in again',
    });
    expect(rows.get(USER)).toMatchObject({ grantState: 'dead', grantAccessToken: null });
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({ code: 'Restricted' });
  });

  it('retires the grant when the platform refuses the access token during a call', async () => {
    const { service, rows, store } = setUp();
    await store('access-1', 'refresh-1', 3600);
    const call = jest.fn(() => Promise.reject(new PlatformUnauthorizedError()));
    await expect(service.withAccessToken(USER, call)).rejects.toMatchObject({
      code: 'Restricted',
    });
    expect(call).toHaveBeenCalledWith('access-1');
    expect(rows.get(USER)?.grantState).toBe('dead');
  });

  it('passes other failures of a call through, keeping the grant', async () => {
    const { service, rows, store } = setUp();
    await store('access-1', 'refresh-1', 3600);
    await expect(
      service.withAccessToken(USER, () => Promise.reject(new Error('timeout'))),
    ).rejects.toThrow('timeout');
    expect(rows.get(USER)?.grantState).toBe('active');
  });

  it('refuses a user without a grant', async () => {
    const { service } = setUp();
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({ code: 'Restricted' });
  });

  it('revokes the grant at the platform when the last login ends, even if the platform fails', async () => {
    const { service, platform, rows, store } = setUp();
    await store('access-1', 'refresh-1', 3600);
    platform.revokeToken.mockRejectedValueOnce(new Error('platform down'));
    await service.onLastLoginEnded(new LastLoginEndedEvent(USER));
    expect(platform.revokeToken).toHaveBeenCalledWith('refresh-1', 'refresh_token');
    expect(rows.get(USER)).toMatchObject({ grantState: 'dead', grantRefreshToken: null });
  });
});
