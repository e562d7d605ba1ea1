import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { APIGuildMember } from 'discord-api-types/v10';
import { GrantService, MEMBER_READ_SCOPE } from 'src/auth/grant.service';
import { TokenCipher } from 'src/auth/token-cipher';
import { SharedCache } from 'src/common/cache/shared-cache';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { Clock } from 'src/common/time/clock';
import type { AppConfig } from 'src/config/app-config';
import {
  MAX_RATE_LIMIT_PAUSE_MS,
  MIN_RATE_LIMIT_PAUSE_MS,
  SCOPE_REFUSED_PAUSE_MS,
  UserMemberService,
} from 'src/guilds/user-member.service';
import {
  OAuth2GrantError,
  PlatformRequestError,
  PlatformUnauthorizedError,
  PlatformUnavailableError,
} from 'src/platform/platform.errors';
import {
  type PlatformClient,
  PlatformRateLimitedError,
  PlatformScopeRefusedError,
} from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';
import type { Lookup, OAuth2Grant } from 'src/platform/platform.types';
import { UserEntity } from 'src/users/user.entity';
import { openServiceDatabase, type ServiceDatabase } from 'test/support/service-database';

const USER = '1100000000000000010';
const GUILD = '1100000000000000100';
const OTHER_GUILD = '1100000000000000300';
const START = Date.parse('2026-11-23T12:00:00Z');
const CACHE_TTL_MS = 5_000;
const WITH_SCOPE = `identify guilds ${MEMBER_READ_SCOPE}`;

const member = (id = USER): APIGuildMember =>
  ({ user: { id }, roles: ['200'], communication_disabled_until: null }) as APIGuildMember;
const found = (value: APIGuildMember): Lookup<APIGuildMember> => ({ found: true, value });
const notMember: Lookup<APIGuildMember> = { found: false, missing: 'member' };

const grant = (access: string, refresh: string, scope: string, expiresIn = 3600): OAuth2Grant => ({
  access_token: access,
  token_type: 'Bearer',
  expires_in: expiresIn,
  refresh_token: refresh,
  scope,
});

interface Harness {
  service: UserMemberService;
  platformService: PlatformService;
  platform: {
    getCurrentUserGuildMember: jest.Mock<Promise<Lookup<APIGuildMember>>, [string, string]>;
    getGuildMember: jest.Mock<Promise<Lookup<APIGuildMember>>, [string, string, boolean?]>;
    refreshGrant: jest.Mock<Promise<OAuth2Grant>, [string]>;
    revokeToken: jest.Mock<Promise<void>, [string, string]>;
  };
  /** Stores a grant as a login does, expiring `expiresIn` seconds from now. */
  store: (scope: string, options?: { access?: string; expiresIn?: number }) => Promise<void>;
  stored: () => Promise<UserEntity | null>;
  advance: (ms: number) => void;
}

let database: ServiceDatabase;

beforeAll(async () => {
  database = await openServiceDatabase();
}, 60_000);

afterAll(() => database?.close());

/**
 * UserMemberService with the real GrantService (real cipher, real users table), the real
 * PlatformService and platform cache (on a clock the test moves), and a scripted platform.
 */
async function setUp(): Promise<Harness> {
  await database.clear();
  const users = database.dataSource.getRepository(UserEntity);
  await users.insert({ id: USER, username: 'user', grantState: 'active' });
  let now = START;
  const platform = {
    getCurrentUserGuildMember: jest.fn<Promise<Lookup<APIGuildMember>>, [string, string]>(() =>
      Promise.resolve(found(member())),
    ),
    getGuildMember: jest.fn<Promise<Lookup<APIGuildMember>>, [string, string, boolean?]>(() =>
      Promise.resolve(found(member())),
    ),
    refreshGrant: jest.fn<Promise<OAuth2Grant>, [string]>(),
    revokeToken: jest.fn<Promise<void>, [string, string]>(() => Promise.resolve()),
  };
  const client = platform as unknown as PlatformClient;
  const config = {
    tokenEncryptionKey: randomBytes(32),
    redisKeyPrefix: 'test:',
    platform: { cacheTtlSeconds: CACHE_TTL_MS / 1000 },
  } as AppConfig;
  const clock: Clock = { now: () => new Date(now), nowMs: () => now };
  const redis = { client: null } as RedisConnection;
  const cache = new SharedCache(redis, 'test:', {
    namespace: 'platform',
    defaultTtlMs: CACHE_TTL_MS,
    maxEntries: 1_000,
    now: () => now,
  });
  const grants = new GrantService(users, new TokenCipher(config), client, redis, config, clock);
  const platformService = new PlatformService(client, cache, config);
  const service = new UserMemberService(grants, client, platformService, cache);
  const store: Harness['store'] = async (
    scope,
    { access = 'access-1', expiresIn = 7 * 86_400 } = {},
  ) => {
    await grants.store(
      USER,
      grant(access, 'refresh-1', scope, expiresIn),
      database.dataSource.manager,
    );
  };
  return {
    service,
    platformService,
    platform,
    store,
    stored: () => users.findOneBy({ id: USER }),
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('UserMemberService.ownMember', () => {
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  describe('with a live grant carrying guilds.members.read', () => {
    it("reads the member with the user's own token, never the bot's", async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE);
      await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledWith('access-1', GUILD);
      expect(platform.getGuildMember).not.toHaveBeenCalled();
    });

    it("answers a repeat, and the bot's lookup of the same member, from the cache", async () => {
      const { service, platformService, platform, store, advance } = await setUp();
      await store(WITH_SCOPE);
      await service.ownMember(GUILD, USER);
      await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
      await expect(platformService.getGuildMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
      expect(platform.getGuildMember).not.toHaveBeenCalled();
      // As long as a bot-token lookup is kept, and no longer.
      advance(CACHE_TTL_MS + 1);
      await service.ownMember(GUILD, USER);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(2);
    });

    it('answers from a member the bot-token lookup has cached, without a call', async () => {
      const { service, platformService, platform, store } = await setUp();
      await store(WITH_SCOPE);
      await platformService.getGuildMember(GUILD, USER);
      await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).not.toHaveBeenCalled();
    });

    it('coalesces concurrent lookups of one member into one call', async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE);
      const answers = await Promise.all([1, 2, 3].map(() => service.ownMember(GUILD, USER)));
      expect(answers).toEqual([found(member()), found(member()), found(member())]);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
    });

    it('answers "not a member" for a guild the user is not in, and keeps that answer', async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockResolvedValue(notMember);
      await expect(service.ownMember(OTHER_GUILD, USER)).resolves.toEqual(notMember);
      await expect(service.ownMember(OTHER_GUILD, USER)).resolves.toEqual(notMember);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
    });

    it('refreshes an expired grant first (once for concurrent lookups), then reads with the new token', async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE, { access: 'old', expiresIn: 0 });
      platform.refreshGrant.mockResolvedValue(grant('new', 'refresh-2', WITH_SCOPE));
      await Promise.all([GUILD, OTHER_GUILD].map((guild) => service.ownMember(guild, USER)));
      expect(platform.refreshGrant).toHaveBeenCalledTimes(1);
      expect(platform.refreshGrant).toHaveBeenCalledWith('refresh-1');
      expect(platform.getCurrentUserGuildMember.mock.calls).toEqual(
        expect.arrayContaining([
          ['new', GUILD],
          ['new', OTHER_GUILD],
        ]),
      );
    });
  });

  describe("when the user's token cannot be used, answers undefined (the caller asks the bot)", () => {
    it('for a grant without the scope, without a platform call', async () => {
      const { service, platform, store } = await setUp();
      await store('identify guilds');
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).not.toHaveBeenCalled();
      expect(platform.refreshGrant).not.toHaveBeenCalled();
    });

    it('for a user without a grant (known from an API token only), or unknown', async () => {
      const { service, platform } = await setUp();
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      await expect(service.ownMember(GUILD, '42')).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).not.toHaveBeenCalled();
    });

    it('for a grant already dead, without a platform call', async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE);
      await database.dataSource
        .getRepository(UserEntity)
        .update({ id: USER }, { grantState: 'dead' });
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).not.toHaveBeenCalled();
    });

    it('for an expired grant the platform will not refresh, which is retired', async () => {
      const { service, platform, store, stored } = await setUp();
      await store(WITH_SCOPE, { expiresIn: 0 });
      platform.refreshGrant.mockRejectedValue(new OAuth2GrantError('invalid_grant'));
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).not.toHaveBeenCalled();
      expect(await stored()).toMatchObject({ grantState: 'dead', grantAccessToken: null });
    });

    it('for a token the platform refuses (401): the grant is retired, and not tried again', async () => {
      const { service, platform, store, stored } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockRejectedValue(new PlatformUnauthorizedError());
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      expect(await stored()).toMatchObject({ grantState: 'dead', grantAccessToken: null });
      await expect(service.ownMember(OTHER_GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
    });

    it('for a scope the platform refuses (403): the user is left to the bot for an hour', async () => {
      const { service, platform, store, stored, advance } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockRejectedValueOnce(
        new PlatformScopeRefusedError('/users/@me/guilds/:guild_id/member', 50001),
      );
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      // The grant is kept: the token is good for the rest of the service.
      expect((await stored())?.grantState).toBe('active');
      advance(SCOPE_REFUSED_PAUSE_MS);
      await expect(service.ownMember(OTHER_GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
      advance(1);
      await expect(service.ownMember(OTHER_GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(2);
    });

    it("when the user's route is rate limited (429): the user is left to the bot for the platform's wait", async () => {
      const { service, platform, store, advance } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockRejectedValueOnce(
        new PlatformRateLimitedError('GET /users/@me/guilds/:guild_id/member: 429', 3_000),
      );
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      advance(3_000);
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
      advance(1);
      await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(2);
    });

    it.each([
      [0, MIN_RATE_LIMIT_PAUSE_MS],
      [24 * 3_600_000, MAX_RATE_LIMIT_PAUSE_MS],
    ])('bounds the pause after a 429 asking for %i ms to %i ms', async (askedMs, pauseMs) => {
      const { service, platform, store, advance } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockRejectedValueOnce(
        new PlatformRateLimitedError('rate limited', askedMs),
      );
      await service.ownMember(GUILD, USER);
      advance(pauseMs);
      await service.ownMember(GUILD, USER);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(1);
      advance(1);
      await service.ownMember(GUILD, USER);
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(2);
    });

    it('for an answer the service does not expect, without leaving the route alone', async () => {
      const { service, platform, store } = await setUp();
      await store(WITH_SCOPE);
      platform.getCurrentUserGuildMember.mockRejectedValueOnce(
        new PlatformRequestError('GET /users/@me/guilds/:guild_id/member', 400, 50035),
      );
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getCurrentUserGuildMember).toHaveBeenCalledTimes(2);
    });

    it("caches nothing, so the bot's lookup that follows asks the platform", async () => {
      const { service, platformService, platform, store } = await setUp();
      await store('identify guilds');
      await expect(service.ownMember(GUILD, USER)).resolves.toBeUndefined();
      await expect(platformService.getGuildMember(GUILD, USER)).resolves.toEqual(found(member()));
      expect(platform.getGuildMember).toHaveBeenCalledTimes(1);
    });
  });

  it('lets a platform outage through, as the bot lookup would meet it too', async () => {
    const { service, platform, store, stored } = await setUp();
    await store(WITH_SCOPE);
    platform.getCurrentUserGuildMember.mockRejectedValueOnce(
      new PlatformUnavailableError('GET /users/@me/guilds/:guild_id/member: timed out'),
    );
    await expect(service.ownMember(GUILD, USER)).rejects.toBeInstanceOf(PlatformUnavailableError);
    expect((await stored())?.grantState).toBe('active');
    // Nothing was held: the next lookup asks again.
    await expect(service.ownMember(GUILD, USER)).resolves.toEqual(found(member()));
  });
});
