import {
  PermissionFlagsBits as P,
  type APIGuild,
  type APIGuildMember,
} from 'discord-api-types/v10';
import type { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import type { GuildStateService } from 'src/bot-reports/guild-state/guild-state.service';
import type { Clock } from 'src/common/time/clock';
import type { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import type { UserGuildsService } from 'src/guilds/user-guilds.service';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import type { UserMemberService } from 'src/guilds/user-member.service';
import { type GuildChannel } from 'src/guilds/guild-context';
import { isThread } from 'src/guilds/platform-permissions';
import type { PlatformService } from 'src/platform/platform.service';
import type { Lookup } from 'src/platform/platform.types';

const GUILD = '100';
const BOT = '900';
const USER = '500';
const found = <T>(value: T): Lookup<T> => ({ found: true, value });

const guild = {
  id: GUILD,
  name: 'g',
  owner_id: '1',
  roles: [
    {
      id: GUILD,
      name: '@everyone',
      permissions: (P.ViewChannel | P.SendMessages | P.ReadMessageHistory).toString(),
      position: 0,
    },
    { id: '200', name: 'mod', permissions: P.ManageRoles.toString(), position: 2 },
    { id: '300', name: 'bot', permissions: P.ManageRoles.toString(), position: 1 },
  ],
} as unknown as APIGuild;
const channels = [
  { id: '10', type: 0, name: 'text', position: 0, permission_overwrites: [] },
  { id: '11', type: 11, name: 'thread', parent_id: '10' },
  { id: '12', type: 11, name: 'orphan thread', parent_id: '99' },
] as unknown as GuildChannel[];
const member = (id: string, roles: string[], until?: string): APIGuildMember =>
  ({ user: { id }, roles, communication_disabled_until: until ?? null }) as APIGuildMember;

function memberLookup(id: string, user: APIGuildMember | null): Lookup<APIGuildMember> {
  return id === BOT
    ? found(member(BOT, ['300']))
    : user
      ? found(user)
      : { found: false, missing: 'member' };
}

type Overrides = Partial<Record<keyof PlatformService | keyof BotMembershipService, unknown>>;

/** What the membership feed says: the bot is in GUILD. */
const MEMBERSHIP_KEYS = ['isBotIn', 'refusedByPlatform'] as const;

function service(
  /** The clock's time: fixed, or read on every call. */
  now: string | (() => string),
  user: APIGuildMember | null,
  overrides: Overrides = {},
  /** The user's own guild list and the rate limiter, where a test decides them. */
  deps: { userGuilds?: Partial<UserGuildsService>; limiter?: Partial<RateLimiter> } = {},
): GuildAccessService {
  const membership = {
    isBotIn: (id: string) => Promise.resolve(id === GUILD),
    refusedByPlatform: () => Promise.resolve(),
    ...Object.fromEntries(
      MEMBERSHIP_KEYS.filter((key) => key in overrides).map((key) => [key, overrides[key]]),
    ),
  } as unknown as BotMembershipService;
  const platform = {
    getBotUser: () => Promise.resolve({ id: BOT }),
    getGuild: () => Promise.resolve(found(guild)),
    getGuildChannels: () => Promise.resolve(found(channels.filter((c) => !isThread(c)))),
    getActiveThreads: () => Promise.resolve(found(channels.filter((c) => isThread(c)))),
    getGuildMember: (_guild: string, id: string) => Promise.resolve(memberLookup(id, user)),
    rememberRefusal: () => Promise.resolve(),
    holdsGuild: () => Promise.resolve(false),
    heldGuildMember: () => Promise.resolve(undefined),
    ...overrides,
  } as unknown as PlatformService;
  const time = typeof now === 'string' ? (): string => now : now;
  const clock: Clock = { now: () => new Date(time()), nowMs: () => Date.parse(time()) };
  // No live guild state: the platform path (the fed path is tested end to end).
  const guildStates = { live: () => Promise.resolve(undefined) } as unknown as GuildStateService;
  // A session without a usable grant: the caller's member is read with the bot token.
  const userMembers = {
    ownMember: () => Promise.resolve(undefined),
  } as unknown as UserMemberService;
  // Outside a request: no user to charge a cold load to.
  const limiter = (deps.limiter ?? { enabled: false }) as unknown as RateLimiter;
  // No guild list of the user held, unless the test holds one.
  const userGuilds = {
    heldGuildIds: () => Promise.resolve(undefined),
    ...deps.userGuilds,
  } as unknown as UserGuildsService;
  return new GuildAccessService(
    platform,
    membership,
    guildStates,
    userMembers,
    clock,
    limiter,
    userGuilds,
  );
}

describe('GuildAccessService', () => {
  const timedOutUntil = '2030-01-01T00:00:00.000Z';

  it('applies a timeout relative to the injected clock', async () => {
    const during = await service(
      '2029-12-31T23:59:59.000Z',
      member(USER, [], timedOutUntil),
    ).forMember(GUILD, USER);
    const text = during.context.channel('10') as GuildChannel;
    expect(during.user.permissionsIn(text)).toBe(P.ViewChannel | P.ReadMessageHistory);
    const after = await service(
      '2030-01-01T00:00:01.000Z',
      member(USER, [], timedOutUntil),
    ).forMember(GUILD, USER);
    expect(after.user.permissionsIn(text)).toBe(
      P.ViewChannel | P.SendMessages | P.ReadMessageHistory,
    );
  });

  it('keeps threads whose parent is visible and drops the others', async () => {
    const { context } = await service('2025-01-01T00:00:00.000Z', member(USER, [])).forMember(
      GUILD,
      USER,
    );
    expect(context.channels.map((c) => c.id)).toEqual(['10', '11']);
    expect(context.parentOf(context.channel('11') as GuildChannel)?.id).toBe('10');
  });

  it('gives base permissions, highest roles and hierarchy checks of both members', async () => {
    const { context, user } = await service(
      '2025-01-01T00:00:00.000Z',
      member(USER, ['200']),
    ).forMember(GUILD, USER);
    expect(user.basePermissions).toBe(
      P.ViewChannel | P.SendMessages | P.ReadMessageHistory | P.ManageRoles,
    );
    expect(user.highestRole.id).toBe('200');
    expect(context.bot.highestRole.id).toBe('300');
    expect(user.canActOn(context.bot).allowed).toBe(true);
    expect(context.bot.canActOn(user).allowed).toBe(false);
    expect(context.bot.canAssignRole(context.role('200') as never).allowed).toBe(false);
    expect(user.canAssignRole(context.role('300') as never).allowed).toBe(true);
  });

  it('answers NotFound for a user who is not a member', async () => {
    await expect(
      service('2025-01-01T00:00:00.000Z', null).forMember(GUILD, USER),
    ).rejects.toMatchObject({ code: 'NotFound', message: 'You are not a member of this guild' });
  });
});

/**
 * A user whose own guild list, as held, does not list the guild: read again with their own token
 * (charged to `guild-check`) before they are refused; a refusal loads nothing.
 */
describe('GuildAccessService and a guild list that does not list the guild', () => {
  const NOW = '2025-01-01T00:00:00.000Z';
  const listing = (...ids: string[]): Promise<ReadonlySet<string>> => Promise.resolve(new Set(ids));

  it.each([
    // [case, held list, list read again, guild-check budget spent, served, lists read again]
    ['listed as held: no re-read', [GUILD], [GUILD], false, true, 0],
    ['joined since the list was read', [], [GUILD], false, true, 1],
    ['not a member, as read again', [], [], false, false, 1],
    ['budget spent: the list as held stands', [], [GUILD], true, false, 0],
    ['the list cannot be read again: loaded as before', [], undefined, false, true, 1],
  ] as const)('%s', async (_case, held, again, spent, served, reads) => {
    const readGuildIdsAgain = jest.fn(() =>
      again === undefined ? Promise.resolve(undefined) : listing(...again),
    );
    const getGuild = jest.fn(() => Promise.resolve(found(guild)));
    const count = jest.fn(() => Promise.resolve({ blocked: spent }));
    const access = service(
      NOW,
      member(USER, []),
      { getGuild },
      {
        userGuilds: { heldGuildIds: () => listing(...held), readGuildIdsAgain },
        limiter: { enabled: true, count } as unknown as Partial<RateLimiter>,
      },
    );
    const result = access.forMember(GUILD, USER);
    if (served) {
      await expect(result).resolves.toMatchObject({ user: expect.anything() });
      expect(getGuild).toHaveBeenCalled();
    } else {
      await expect(result).rejects.toMatchObject({
        code: 'NotFound',
        message: 'You are not a member of this guild',
      });
      expect(getGuild).not.toHaveBeenCalled();
    }
    expect(readGuildIdsAgain).toHaveBeenCalledTimes(reads);
    if (held.length === 0) expect(count).toHaveBeenCalledWith('guild-check', USER);
  });
});

describe('GuildAccessService platform calls', () => {
  const NOW = '2025-01-01T00:00:00.000Z';
  /** Per-guild lookups that fail the test if made. */
  const forbidden = (name: string) => () => Promise.reject(new Error(`${name} was called`));

  it("answers NotFound for a guild not in the bot's guild list without asking the platform about it", async () => {
    const perGuild = {
      getGuild: forbidden('getGuild'),
      getGuildChannels: forbidden('getGuildChannels'),
      getActiveThreads: forbidden('getActiveThreads'),
      getGuildMember: forbidden('getGuildMember'),
    };
    const access = service(NOW, member(USER, []), perGuild);
    const notIn = { code: 'NotFound', message: 'The bot is not in this guild' };
    await expect(access.guildContext('101')).rejects.toMatchObject(notIn);
    await expect(access.forMember('101', USER)).rejects.toMatchObject(notIn);
  });

  it('asks for the guild, its parts and both members at once: one round trip', async () => {
    const started: string[] = [];
    let open = (): void => undefined;
    const release = { promise: new Promise<void>((resolve) => (open = resolve)) };
    /** A lookup that records its start and answers only once every lookup has started. */
    const held =
      <T>(name: string, answer: (id: string) => T) =>
      async (_guild: string, id = ''): Promise<T> => {
        started.push(name === 'getGuildMember' ? `getGuildMember ${id}` : name);
        await release.promise;
        return answer(id);
      };
    const access = service(NOW, member(USER, []), {
      getGuild: held('getGuild', () => found(guild)),
      getGuildChannels: held('getGuildChannels', () => found(channels.filter((c) => !isThread(c)))),
      getActiveThreads: held('getActiveThreads', () => found(channels.filter((c) => isThread(c)))),
      getGuildMember: held('getGuildMember', (id) => memberLookup(id, member(USER, []))),
    });
    const opened = access.forMember(GUILD, USER);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started.sort()).toEqual(
      [
        'getActiveThreads',
        'getGuild',
        'getGuildChannels',
        `getGuildMember ${BOT}`,
        `getGuildMember ${USER}`,
      ].sort(),
    );
    open();
    expect((await opened).user.userId).toBe(USER);
  });

  it('tells membership at once when the platform refuses a guild the bot was held to be in', async () => {
    const refused: string[] = [];
    const access = service(NOW, member(USER, []), {
      getGuild: () => Promise.resolve({ found: false, missing: 'guild' }),
      refusedByPlatform: (id: string) => {
        refused.push(id);
        return Promise.resolve();
      },
    });
    const notIn = { code: 'NotFound', message: 'The bot is not in this guild' };
    await expect(access.guildContext(GUILD)).rejects.toMatchObject(notIn);
    await expect(access.forMember(GUILD, USER)).rejects.toMatchObject(notIn);
    expect(refused).toEqual([GUILD, GUILD]);
  });
});

describe('GuildAccessService contexts', () => {
  const NOW = '2025-01-01T00:00:00.000Z';
  const user = member(USER, ['200']);
  const botMember = memberLookup(BOT, null);
  const stored = {
    guild: found(guild),
    channels: found(channels.filter((c) => !isThread(c))),
    threads: found(channels.filter((c) => isThread(c))),
  };
  /** The platform cache holding every answer: the same objects on every read. */
  const cachedAnswers: Overrides = {
    getGuild: () => Promise.resolve(stored.guild),
    getGuildChannels: () => Promise.resolve(stored.channels),
    getActiveThreads: () => Promise.resolve(stored.threads),
    getGuildMember: (_guild: string, id: string) =>
      Promise.resolve(id === BOT ? botMember : found(user)),
  };

  it('builds one context from the same cached answers, and a new one when an answer changes', async () => {
    let answers = stored.channels;
    const access = service(NOW, user, {
      ...cachedAnswers,
      getGuildChannels: () => Promise.resolve(answers),
    });
    const first = await access.guildContext(GUILD);
    expect(first.channels.map((c) => c.id)).toEqual(['10', '11']);
    expect(first.bot.highestRole.id).toBe('300');
    expect((await access.withMember(GUILD, USER)).context).toBe(first);
    answers = found(channels.filter((c) => !isThread(c) && c.id !== '10'));
    const second = await access.guildContext(GUILD);
    expect(second).not.toBe(first);
    expect(second.channels.map((c) => c.id)).toEqual([]);
  });

  it('builds a new context once the last is a second old, so timeouts are judged afresh', async () => {
    let now = NOW;
    const access = service(() => now, user, cachedAnswers);
    const first = await access.guildContext(GUILD);
    now = '2025-01-01T00:00:00.999Z';
    expect(await access.guildContext(GUILD)).toBe(first);
    now = '2025-01-01T00:00:01.000Z';
    expect(await access.guildContext(GUILD)).not.toBe(first);
  });

  it.each([
    ['a guild not found', { getGuild: () => Promise.resolve({ found: false, missing: 'guild' }) }],
    [
      'channels not found',
      { getGuildChannels: () => Promise.resolve({ found: false, missing: 'guild' }) },
    ],
    [
      "the bot's member not found",
      {
        getGuildMember: (_guild: string, id: string) =>
          Promise.resolve(id === BOT ? { found: false, missing: 'member' } : found(user)),
      },
    ],
  ])('answers NotFound for %s', async (_case, override) => {
    const access = service(NOW, user, { ...cachedAnswers, ...override });
    await expect(access.guildContext(GUILD)).rejects.toMatchObject({
      code: 'NotFound',
      message: 'The bot is not in this guild',
    });
  });

  it('tells a member and a non-member apart, charging only a lookup the platform answers', async () => {
    const context = await service(NOW, user, cachedAnswers).guildContext(GUILD);
    const lookups: Record<string, Lookup<APIGuildMember>> = {
      [USER]: found(user),
      '501': { found: false, missing: 'member' },
    };
    const budgets: unknown[] = [];
    const access = service(NOW, user, {
      getGuildMember: (
        _guild: string,
        id: string,
        options: { beforeCall?: () => Promise<void> },
      ) => {
        budgets.push(options.beforeCall);
        return Promise.resolve(lookups[id]);
      },
    });
    const charge = (): Promise<void> => Promise.resolve();
    expect((await access.memberOf(context, USER, charge))?.highestRole.id).toBe('200');
    expect(await access.memberOf(context, '501', charge)).toBeNull();
    // The budget goes to the platform service, which runs it only before a call it makes.
    expect(budgets).toEqual([charge, charge]);
  });
});
