import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { GrantService } from 'src/auth/grant.service';
import { TokenCipher } from 'src/auth/token-cipher';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { Clock } from 'src/common/time/clock';
import type { AppConfig } from 'src/config/app-config';
import { OAuth2GrantError, PlatformUnauthorizedError } from 'src/platform/platform.errors';
import type { PlatformClient } from 'src/platform/platform.client';
import type { OAuth2Grant } from 'src/platform/platform.types';
import { LastLoginEndedEvent } from 'src/sessions/sessions.events';
import { UserEntity } from 'src/users/user.entity';
import { openServiceDatabase, type ServiceDatabase } from 'test/support/service-database';

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
  /** The user's stored row. */
  stored: () => Promise<UserEntity | null>;
  store: (access: string, refresh: string, expiresIn: number) => Promise<void>;
}

/** The users table, by the service's migrations. */
let database: ServiceDatabase;

beforeAll(async () => {
  database = await openServiceDatabase();
}, 60_000);

afterAll(() => database?.close());

/** GrantService with its real cipher, the real users table and a scripted platform. */
async function setUp(): Promise<Harness> {
  await database.clear();
  const users = database.dataSource.getRepository(UserEntity);
  await users.insert({ id: USER, username: 'user', grantState: 'active' });
  const platform = {
    refreshGrant: jest.fn<Promise<OAuth2Grant>, [string]>(),
    revokeToken: jest.fn<Promise<void>, [string, string]>(() => Promise.resolve()),
  };
  const config = { tokenEncryptionKey: randomBytes(32), redisKeyPrefix: 'test:' } as AppConfig;
  const clock: Clock = { now: () => new Date(NOW), nowMs: () => NOW };
  const cipher = new TokenCipher(config);
  const service = new GrantService(
    users,
    cipher,
    platform as unknown as PlatformClient,
    { client: null } as RedisConnection,
    config,
    clock,
  );
  /** Stores a grant as a login does, expiring `expiresIn` seconds from now. */
  const store = async (access: string, refresh: string, expiresIn: number): Promise<void> => {
    await service.store(USER, grant(access, refresh, expiresIn), database.dataSource.manager);
  };
  return { service, platform, stored: () => users.findOneBy({ id: USER }), store };
}

describe('GrantService', () => {
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it('stores a grant encrypted and hands back the access token while it is valid', async () => {
    const { service, platform, stored, store } = await setUp();
    await store('access-1', 'refresh-1', 3600);
    const row = await stored();
    expect(row?.grantAccessToken?.toString('utf8')).not.toContain('access-1');
    expect(row?.grantExpiresAt).toEqual(new Date(NOW + 3_600_000));
    await expect(service.accessTokenFor(USER)).resolves.toBe('access-1');
    expect(platform.refreshGrant).not.toHaveBeenCalled();
  });

  it('refreshes an expiring grant once for concurrent callers, and stores the new one', async () => {
    const { service, platform, store } = await setUp();
    await store('old', 'refresh-1', 30);
    platform.refreshGrant.mockResolvedValue(grant('new', 'refresh-2'));
    const tokens = await Promise.all([1, 2, 3].map(() => service.accessTokenFor(USER)));
    expect(tokens).toEqual(['new', 'new', 'new']);
    expect(platform.refreshGrant).toHaveBeenCalledTimes(1);
    expect(platform.refreshGrant).toHaveBeenCalledWith('refresh-1');
    await expect(service.accessTokenFor(USER)).resolves.toBe('new');
  });

  it('retires a grant the platform will not refresh, and asks for a new login', async () => {
    const { service, platform, stored, store } = await setUp();
    await store('old', 'refresh-1', 0);
    platform.refreshGrant.mockRejectedValue(new OAuth2GrantError('invalid_grant'));
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({
      code: 'Restricted',
      message: 'Your Discord authorization has expired or was revoked; log in again',
    });
    expect(await stored()).toMatchObject({ grantState: 'dead', grantAccessToken: null });
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({ code: 'Restricted' });
  });

  it('retires the grant when the platform refuses the access token during a call', async () => {
    const { service, stored, store } = await setUp();
    await store('access-1', 'refresh-1', 3600);
    const call = jest.fn(() => Promise.reject(new PlatformUnauthorizedError()));
    await expect(service.withAccessToken(USER, call)).rejects.toMatchObject({
      code: 'Restricted',
    });
    expect(call).toHaveBeenCalledWith('access-1');
    expect((await stored())?.grantState).toBe('dead');
  });

  it('passes other failures of a call through, keeping the grant', async () => {
    const { service, stored, store } = await setUp();
    await store('access-1', 'refresh-1', 3600);
    await expect(
      service.withAccessToken(USER, () => Promise.reject(new Error('timeout'))),
    ).rejects.toThrow('timeout');
    expect((await stored())?.grantState).toBe('active');
  });

  describe('withScopedAccessToken', () => {
    const SCOPE = 'guilds.members.read';
    const storeWith = async (scope: string, expiresIn = 3600): Promise<void> => {
      await harness.service.store(
        USER,
        { ...grant('access-1', 'refresh-1', expiresIn), scope },
        database.dataSource.manager,
      );
    };
    let harness: Harness;
    beforeEach(async () => {
      harness = await setUp();
    });

    it('calls with the access token of a grant carrying the scope', async () => {
      await storeWith(`identify guilds ${SCOPE}`);
      const call = jest.fn((token: string) => Promise.resolve(`read with ${token}`));
      await expect(harness.service.withScopedAccessToken(USER, SCOPE, call)).resolves.toBe(
        'read with access-1',
      );
    });

    it('answers undefined without calling when the grant lacks the scope, or there is none', async () => {
      const call = jest.fn(() => Promise.resolve('read'));
      await expect(
        harness.service.withScopedAccessToken(USER, SCOPE, call),
      ).resolves.toBeUndefined();
      await storeWith('identify guilds');
      await expect(
        harness.service.withScopedAccessToken(USER, SCOPE, call),
      ).resolves.toBeUndefined();
      expect(call).not.toHaveBeenCalled();
      expect(harness.platform.refreshGrant).not.toHaveBeenCalled();
    });

    it('answers undefined for a grant the platform will not refresh, and retires it', async () => {
      await storeWith(SCOPE, 0);
      harness.platform.refreshGrant.mockRejectedValue(new OAuth2GrantError('invalid_grant'));
      const call = jest.fn(() => Promise.resolve('read'));
      await expect(
        harness.service.withScopedAccessToken(USER, SCOPE, call),
      ).resolves.toBeUndefined();
      expect(call).not.toHaveBeenCalled();
      expect((await harness.stored())?.grantState).toBe('dead');
    });

    it('retires the grant and answers undefined when the platform refuses the token', async () => {
      await storeWith(SCOPE);
      const call = jest.fn(() => Promise.reject(new PlatformUnauthorizedError()));
      await expect(
        harness.service.withScopedAccessToken(USER, SCOPE, call),
      ).resolves.toBeUndefined();
      expect((await harness.stored())?.grantState).toBe('dead');
    });

    it('passes other failures of the call through, keeping the grant', async () => {
      await storeWith(SCOPE);
      await expect(
        harness.service.withScopedAccessToken(USER, SCOPE, () =>
          Promise.reject(new Error('timeout')),
        ),
      ).rejects.toThrow('timeout');
      expect((await harness.stored())?.grantState).toBe('active');
    });
  });

  it('refuses a user without a grant', async () => {
    const { service } = await setUp();
    await expect(service.accessTokenFor(USER)).rejects.toMatchObject({ code: 'Restricted' });
  });

  it('revokes the grant at the platform when the last login ends, even if the platform fails', async () => {
    const { service, platform, stored, store } = await setUp();
    await store('access-1', 'refresh-1', 3600);
    platform.revokeToken.mockRejectedValueOnce(new Error('platform down'));
    await service.onLastLoginEnded(new LastLoginEndedEvent(USER));
    expect(platform.revokeToken).toHaveBeenCalledWith('refresh-1', 'refresh_token');
    expect(await stored()).toMatchObject({ grantState: 'dead', grantRefreshToken: null });
  });
});
