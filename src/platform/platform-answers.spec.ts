import fc from 'fast-check';
import type { APIGuild, APIGuildMember } from 'discord-api-types/v10';
import { GuildContext, type GuildChannel } from 'src/guilds/guild-context';
import {
  readActiveThreads,
  readChannels,
  readGuild,
  readGuildList,
  readMember,
  readUser,
} from 'src/platform/platform-answers';
import { PlatformAnswerError } from 'src/platform/platform.errors';
import {
  answerOf,
  answerSchemas,
  guildListOf,
  guildWorldOf,
  itemsOf,
  requiredOnly,
  VARIATIONS,
  type GuildWorld,
  type Json,
} from 'test/support/discord-arbitraries';
import type { SpecSchema } from 'test/support/discord-spec';

/**
 * The service takes any answer Discord's OpenAPI document allows (built from its schemas: required
 * fields only, every nullable field null, unknown enum values, flags and features, new fields):
 * no crash, and the same permissions as from the same answer with its optional fields filled.
 * What it cannot use fails as a PlatformAnswerError naming the field.
 */

const RUNS = 60;
const SCHEMAS = answerSchemas();
/** What the permission algorithm reads beside the required fields: never stripped. */
const PERMISSION_FIELDS = new Set(['permission_overwrites', 'parent_id']);
const NOW = new Date('2026-06-01T00:00:00.000Z');

/** The world's answers without their optional fields (those the algorithm reads kept). */
function stripped(world: GuildWorld): GuildWorld {
  const strip = (schema: SpecSchema, value: unknown): Json =>
    requiredOnly(schema, value, PERMISSION_FIELDS) as Json;
  return {
    guild: strip(SCHEMAS.guild, world.guild),
    channels: world.channels.map((c) => strip(itemsOf(SCHEMAS.channels), c)),
    threads: strip(SCHEMAS.threads, world.threads),
    bot: strip(SCHEMAS.member, world.bot),
    user: strip(SCHEMAS.member, world.user),
  };
}

/** Every permission the service computes from a world's answers, read as the client reads them. */
function permissionsOf(world: GuildWorld): Record<string, string> {
  const guild: APIGuild = readGuild('GET /guilds/:guild_id', world.guild);
  // The document lets a guild's lists hold any channel shape; the service reads them alike.
  const channels = [
    ...readChannels('GET /guilds/:guild_id/channels', world.channels),
    ...readActiveThreads('GET /guilds/:guild_id/threads/active', world.threads).threads,
  ] as GuildChannel[];
  const bot: APIGuildMember = readMember('GET /guilds/:guild_id/members/:user_id', world.bot);
  const user = readMember('GET /guilds/:guild_id/members/:user_id', world.user);
  const context = new GuildContext(guild, channels, bot, NOW);
  const access = context.accessOf(user);
  const result: Record<string, string> = {
    'bot base': context.bot.basePermissions.toString(),
    'user base': access.basePermissions.toString(),
    'bot highest role': context.bot.highestRole.id,
    'user highest role': access.highestRole.id,
  };
  for (const channel of context.channels) {
    result[`bot in ${channel.id}`] = context.bot.permissionsIn(channel).toString();
    result[`user in ${channel.id}`] = access.permissionsIn(channel).toString();
  }
  return result;
}

/** `read(body)`, or the PlatformAnswerError it threw; any other error fails the property. */
function attempt<T>(read: () => T): T | PlatformAnswerError {
  try {
    return read();
  } catch (error) {
    if (error instanceof PlatformAnswerError) return error;
    throw error;
  }
}

describe.each(Object.entries(VARIATIONS))('answers with %s', (_, variation) => {
  it('a guild read from them gives the permissions of the same answers with every optional field filled', () => {
    const filled = { ...variation, optional: 'full' as const };
    fc.assert(
      fc.property(guildWorldOf(filled), (world) => {
        expect(permissionsOf(stripped(world))).toEqual(permissionsOf(world));
      }),
      { numRuns: RUNS },
    );
  });

  it('a guild read from them: permissions computed, no crash', () => {
    fc.assert(
      fc.property(guildWorldOf(variation), (world) => {
        expect(Object.keys(permissionsOf(world)).length).toBeGreaterThanOrEqual(4);
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['GET /users/@me', readUser, SCHEMAS.user],
    ['GET /users/@me/guilds/{id}/member', readMember, SCHEMAS.ownMember],
    ['GET /guilds/{id}/members/{user_id}', readMember, SCHEMAS.member],
  ])('%s: every answer is read as it came', (route, read, schema) => {
    fc.assert(
      fc.property(answerOf(schema, variation), (body) => {
        expect(read(route, body)).toBe(body);
      }),
      { numRuns: RUNS },
    );
  });

  it('GET /users/@me/guilds: read, or refused naming the field (a list that is null)', () => {
    const page = guildListOf(variation);
    fc.assert(
      fc.property(page, (body) => {
        const result = attempt(() => readGuildList('GET /users/@me/guilds', body));
        if (result instanceof PlatformAnswerError) {
          expect(result.field).toMatch(/^(the answer|\[\d+\]\.permissions)$/);
          if (result.field === 'the answer') expect(body).toBeNull();
        } else {
          expect(result).toEqual(body);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['GET /guilds/:guild_id', readGuild, SCHEMAS.guild],
    ['GET /guilds/:guild_id/channels', readChannels, SCHEMAS.channels],
    ['GET /guilds/:guild_id/threads/active', readActiveThreads, SCHEMAS.threads],
  ] as const)(
    '%s as generated, ids and bitfields unrelated: read, or refused naming the field',
    (route, read, schema) => {
      fc.assert(
        fc.property(answerOf(schema, variation), (body) => {
          const result = attempt(() => read(route, body));
          if (result instanceof PlatformAnswerError) {
            expect(result.message).toContain(
              `${route} answered 200 with an unusable ${result.field}: `,
            );
            expect(result.field).toMatch(/^(the answer|roles|[\w.[\]]*(permissions|allow|deny))$/);
          }
        }),
        { numRuns: RUNS },
      );
    },
  );
});

describe('answers the service cannot use', () => {
  const cases: [string, string, () => unknown][] = [
    [
      'a guild without @everyone',
      'roles',
      () => readGuild('r', { id: '1', name: 'g', icon: null, owner_id: '2', roles: [] }),
    ],
    [
      'a role bitfield not a number',
      'roles[0].permissions',
      () =>
        readGuild('r', {
          id: '1',
          name: 'g',
          icon: null,
          owner_id: '2',
          roles: [{ id: '1', name: '@everyone', permissions: 'all', position: 0 }],
        }),
    ],
    ['a channel list that is null', 'the answer', () => readChannels('r', null)],
    [
      'an overwrite without its id',
      '[0].permission_overwrites[0].id',
      () =>
        readChannels('r', [
          { id: '3', type: 0, permission_overwrites: [{ type: 0, allow: '0', deny: '0' }] },
        ]),
    ],
    [
      'a thread list that is not a list',
      'threads',
      () => readActiveThreads('r', { threads: {}, members: [] }),
    ],
    ['a member without its user', 'user', () => readMember('r', { roles: [] })],
    ['a user without an id', 'id', () => readUser('r', { username: 'x' })],
  ];

  it.each(cases)('%s fails naming %s', (_, field, read) => {
    expect(read).toThrow(PlatformAnswerError);
    expect(attempt(read)).toMatchObject({ field, status: 200 });
  });

  it('an archived thread in the active list is not active (its thread_metadata says so)', () => {
    const thread = (id: string, archived: boolean): Json => ({
      id,
      type: 11,
      parent_id: '5',
      thread_metadata: {
        archived,
        archive_timestamp: null,
        auto_archive_duration: 60,
        locked: false,
      },
    });
    const read = readActiveThreads('r', {
      threads: [thread('6', false), thread('7', true)],
      members: [],
      has_more: false,
    });
    expect(read.threads.map((t) => t.id)).toEqual(['6']);
  });
});
