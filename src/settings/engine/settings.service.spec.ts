import { EventEmitter2 } from '@nestjs/event-emitter';
import type { DiscoveryService } from '@nestjs/core';
import type { ObjectLiteral, Repository } from 'typeorm';
import { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { Clock } from 'src/common/time/clock';
import type { GuildAccessService } from 'src/guilds/guild-access.service';
import type { GuildContext } from 'src/guilds/guild-context';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { PermissionsService } from 'src/permissions/permissions.service';
import { SettingsCache } from 'src/settings/engine/settings-cache';
import { SettingsCallers } from 'src/settings/engine/settings-callers';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { GuildSettingsWriters } from 'src/settings/engine/guild-settings-writers';
import type { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { AppConfig } from 'src/config/app-config';
import type { ExecutableOperation } from 'src/settings/schema/settings-schema';
import { SettingsService } from 'src/settings/engine/settings.service';
import { type SettingsAuthor } from 'src/settings/engine/settings-author';
import {
  FEEDBACK_TABLE_SQL,
  FeedbackSetting,
  FeedbackTopicEntity,
} from 'test/fixtures/feedback.setting';
import { openServiceDatabase, type ServiceDatabase } from 'test/support/service-database';

const GUILD = '500';
const OWNER = '10';
const MODERATOR = '11';
const OUTSIDER = '12';
const MOD_ROLE = '600';
const CHANNEL = '700';
const NOW = new Date('2026-11-23T12:00:00.000Z');

/** The service's database for this file: its schema by its migrations, plus the fixture's table. */
let database: ServiceDatabase;

beforeAll(async () => {
  database = await openServiceDatabase({
    entities: [FeedbackTopicEntity],
    sql: [FEEDBACK_TABLE_SQL],
  });
}, 60_000);

afterAll(() => database?.close());

/**
 * The engine over the feedback fixture setting, a guild of three users (the platform's answers
 * faked), and the real repositories, settings cache, writers and database.
 */
async function setUp(): Promise<{
  service: SettingsService;
  /** Runs an operation of the feedback setting as `userId`. */
  run: (userId: string, operation: ExecutableOperation, fields: unknown) => Promise<Buffer>;
  feedback: Repository<ObjectLiteral>;
  /** The guild's revisions, in order. */
  revisions: () => Promise<ObjectLiteral[]>;
  changed: jest.SpyInstance;
  /** The platform's answers about the guild: how often the caller's member was asked for. */
  withMember: jest.Mock;
  /** Whether the bot is in the guild. */
  botIn: { value: boolean };
}> {
  await database.clear();
  const { dataSource } = database;
  const discovery = {
    getProviders: () => [{ instance: new FeedbackSetting() }],
  } as unknown as DiscoveryService;
  const registry = new SettingsRegistry(discovery, dataSource);
  registry.onModuleInit();

  const context = {
    guild: {
      id: GUILD,
      owner_id: OWNER,
      roles: [
        { id: GUILD, position: 0 },
        { id: MOD_ROLE, position: 1 },
      ],
    },
    role: (id: string) => (id === MOD_ROLE ? { id } : undefined),
    channel: (id: string) => (id === CHANNEL ? { id } : undefined),
  } as unknown as GuildContext;
  const memberRoles: Record<string, string[]> = { [OWNER]: [], [MODERATOR]: [MOD_ROLE] };
  const memberOf = (userId: string): object | null =>
    memberRoles[userId] ? { member: { roles: memberRoles[userId] } } : null;
  const botIn = { value: true };
  const withMember = jest.fn((_guildId: string, userId: string) =>
    Promise.resolve({ context, user: memberOf(userId) }),
  );
  const guilds = {
    assertBotIn: () =>
      botIn.value
        ? Promise.resolve()
        : Promise.reject(new AppException(ErrorCode.NotFound, 'The bot is not in this guild')),
    guildContext: () => Promise.resolve(context),
    withMember,
    memberOf: (_context: GuildContext, userId: string) => Promise.resolve(memberOf(userId)),
  } as unknown as GuildAccessService;

  // The moderator's role grants reading feedback topics; the outsider is granted everything but
  // is not a member.
  const audit = {
    created_at: NOW,
    created_by: OWNER,
    last_updated_at: NOW,
    last_updated_by: OWNER,
  };
  await dataSource.getRepository(GuildRoleEntity).insert({
    ...audit,
    guild_id: GUILD,
    role_id: MOD_ROLE,
    index: 1,
    perms: ['feedback_topics.view'],
  });
  await dataSource
    .getRepository(GuildMemberEntity)
    .insert({ ...audit, guild_id: GUILD, user_id: OUTSIDER, perm_overrides: ['global.*'] });
  const permissions = new PermissionsService(
    guilds,
    dataSource.getRepository(GuildRoleEntity),
    dataSource.getRepository(GuildMemberEntity),
  );
  const redis = { client: null, keyPrefix: 'test:' } as unknown as RedisConnection;
  const config = { redisKeyPrefix: 'test:' } as AppConfig;
  const cache = new SettingsCache(redis, new SharedCacheFactory(redis, undefined as never), config);
  const changed = jest.spyOn(cache, 'changed');
  const clock: Clock = { now: () => NOW, nowMs: () => NOW.getTime() };
  const service = new SettingsService(
    registry,
    guilds,
    new SettingsCallers(guilds, permissions, { enabled: false } as RateLimiter, clock),
    cache,
    new SettingsEntriesRepository(dataSource),
    clock,
    new EventEmitter2(),
    new GuildSettingsWriters(dataSource, redis, config),
  );
  const run = (userId: string, operation: ExecutableOperation, fields: unknown): Promise<Buffer> =>
    service.execute(GUILD, authorOf(userId), { setting: 'feedback_topics', operation, fields });
  const revisions = dataSource.getRepository(SettingsRevisionEntity);
  return {
    service,
    run,
    feedback: dataSource.getRepository<ObjectLiteral>(FeedbackTopicEntity),
    revisions: () => revisions.find({ where: { guild_id: GUILD }, order: { revision: 'ASC' } }),
    changed,
    withMember,
    botIn,
  };
}

const SESSION = '0f8fad5b-d9cb-469f-a165-70867728950e';
const authorOf = (userId: string): SettingsAuthor => ({
  userId,
  id: SESSION,
  type: 'login',
  scope: null,
});
const TOPIC = { topic: 'bugs', channel: CHANNEL, cooldown: 30 };
const answer = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8'));
/** A row as the engine stores it when the owner creates it now. */
const stored = (fields: object, guildId: string): ObjectLiteral => ({
  version: 1,
  ...fields,
  guild_id: guildId,
  created_at: NOW,
  created_by: OWNER,
  last_updated_at: NOW,
  last_updated_by: OWNER,
});

describe('SettingsService', () => {
  it('answers 404 for a setting nobody declared', async () => {
    const { service } = await setUp();
    await expect(
      service.execute(GUILD, authorOf(OWNER), { setting: 'nope', operation: 'View', fields: {} }),
    ).rejects.toMatchObject({ code: 'NotFound', message: 'Unknown setting nope' });
  });

  it('answers 400 for an operation the setting does not offer, naming the field', async () => {
    const { run } = await setUp();
    await expect(run(OWNER, 'Update', {})).rejects.toMatchObject({
      code: 'BadRequest',
      message: 'feedback_topics does not offer Update',
      details: [{ field: 'operation', message: 'feedback_topics does not offer Update' }],
    });
  });

  it('checks the permission before the fields: invalid fields of a caller without it get 403', async () => {
    const { run } = await setUp();
    await expect(run(MODERATOR, 'Create', { topic: 42 })).rejects.toMatchObject({
      code: 'Restricted',
      message: 'You need the permission feedback_topics.create in this guild',
    });
  });

  it('gives a non-member nothing, whatever is stored for them', async () => {
    const { run } = await setUp();
    await expect(run(OUTSIDER, 'View', {})).rejects.toMatchObject({ code: 'Restricted' });
  });

  it('refuses invalid fields with every problem in the details', async () => {
    const { run } = await setUp();
    const refusal = run(OWNER, 'Create', {
      topic: 'bugs',
      channel: CHANNEL,
      cooldown: 99_999,
      extra: true,
    });
    await expect(refusal).rejects.toMatchObject({ code: 'BadRequest' });
    await expect(refusal).rejects.toThrow(
      /^Invalid fields: .+ \(and 1 more problem\(s\), see details\)$/,
    );
  });

  it('refuses a channel that is not of the guild, before any write', async () => {
    const { run, feedback } = await setUp();
    await expect(run(OWNER, 'Create', { ...TOPIC, channel: '999' })).rejects.toMatchObject({
      code: 'BadRequest',
      message: 'Invalid fields: 999 is not a channel of this guild that the bot can view',
    });
    expect(await feedback.find()).toEqual([]);
  });

  it('creates a row with its guild and author, records a revision and moves the cache on', async () => {
    const { run, feedback, revisions, changed } = await setUp();
    const bytes = await run(OWNER, 'Create', TOPIC);
    const row = {
      ...TOPIC,
      created_at: NOW.toISOString(),
      created_by: OWNER,
      last_updated_at: NOW.toISOString(),
      last_updated_by: OWNER,
      version: 1,
    };
    expect(answer(bytes)).toEqual({ type: 'Ok', data: row });
    expect(await feedback.find()).toEqual([stored(TOPIC, GUILD)]);
    expect(await revisions()).toEqual([
      {
        guild_id: GUILD,
        revision: 1,
        setting: 'feedback_topics',
        key: { topic: 'bugs' },
        operation: 'Create',
        user_id: OWNER,
        session_id: SESSION,
        session_type: 'login',
        before: null,
        after: row,
        diff: Object.fromEntries(
          Object.entries(row).map(([column, value]) => [column, { before: null, after: value }]),
        ),
        reverts: null,
        created_at: NOW,
      },
    ]);
    expect(changed).toHaveBeenCalledWith(GUILD);
  });

  it('numbers revisions on from the guild’s last, one per change', async () => {
    const { run, revisions } = await setUp();
    await run(OWNER, 'Create', TOPIC);
    await run(OWNER, 'Create', { ...TOPIC, topic: 'ideas' });
    await run(OWNER, 'Delete', { topic: 'bugs' });
    const recorded = await revisions();
    expect(recorded.map((r): unknown[] => [r.revision, r.operation, r.key])).toEqual([
      [1, 'Create', { topic: 'bugs' }],
      [2, 'Create', { topic: 'ideas' }],
      [3, 'Delete', { topic: 'bugs' }],
    ]);
    expect(recorded[2]).toMatchObject({ after: null, before: expect.objectContaining(TOPIC) });
  });

  it('refuses a Delete naming a version the row has moved on from, and deletes at the current one', async () => {
    const { run, feedback, revisions } = await setUp();
    await run(OWNER, 'Create', TOPIC);
    await feedback.update({ guild_id: GUILD, topic: 'bugs' }, { version: 3 });
    await expect(run(OWNER, 'Delete', { topic: 'bugs', version: 2 })).rejects.toMatchObject({
      code: 'VersionConflict',
      message:
        'feedback_topics entry topic bugs has changed since you read it (it is at version 3, you sent 2); read it again and retry',
      details: [{ field: 'version' }],
    });
    expect(await feedback.count()).toBe(1);
    expect(await revisions()).toHaveLength(1);
    await expect(run(OWNER, 'Delete', { topic: 'bugs', version: 7 })).rejects.toMatchObject({
      code: 'VersionConflict',
      message:
        'feedback_topics entry topic bugs has no version 7: it is at version 3; read it and send the version it has',
    });
    await run(OWNER, 'Delete', { topic: 'bugs', version: 3 });
    expect(await feedback.find()).toEqual([]);
  });

  it('refuses to create a key that exists, pointing to Update', async () => {
    const { run } = await setUp();
    const create = (): Promise<Buffer> => run(OWNER, 'Create', TOPIC);
    await create();
    await expect(create()).rejects.toMatchObject({
      code: 'BadRequest',
      message: 'feedback_topics already has an entry topic bugs; use Update',
    });
  });

  it('lets a member with the view permission read the guild’s rows, and only those', async () => {
    const { run, feedback } = await setUp();
    await feedback.insert([stored(TOPIC, GUILD), stored({ ...TOPIC, topic: 'other' }, '501')]);
    const bytes = await run(MODERATOR, 'View', {});
    expect(answer(bytes)).toEqual({
      type: 'Ok',
      data: [expect.objectContaining({ topic: 'bugs', created_at: NOW.toISOString() })],
    });
  });

  it('answers a repeated View from the guild’s cache, and a change is read at once', async () => {
    const { run, feedback } = await setUp();
    await run(OWNER, 'Create', TOPIC);
    const loaded = await run(MODERATOR, 'View', {});
    // Stored behind the engine's back: the cache answers until the guild's settings change.
    await feedback.insert(stored({ ...TOPIC, topic: 'hidden' }, GUILD));
    expect(await run(MODERATOR, 'View', {})).toBe(loaded);
    const other = await run(MODERATOR, 'View', { topic: 'hidden' });
    expect(answer(other)).toMatchObject({ data: [{ topic: 'hidden' }] });
    await run(OWNER, 'Create', { ...TOPIC, topic: 'other' });
    expect(answer(await run(MODERATOR, 'View', {}))).toMatchObject({
      data: [{ topic: 'bugs' }, { topic: 'hidden' }, { topic: 'other' }],
    });
  });

  it('refuses a caller whose answer is cached as it refuses otherwise', async () => {
    const { run } = await setUp();
    await run(MODERATOR, 'View', {});
    await expect(run(OUTSIDER, 'View', {})).rejects.toMatchObject({
      code: 'Restricted',
      message: 'You need the permission feedback_topics.view in this guild',
    });
    await expect(run(MODERATOR, 'View', { unknown_field: 1 })).rejects.toMatchObject({
      code: 'BadRequest',
    });
  });

  it('resolves a caller once for a burst of requests, again after a settings change', async () => {
    const { run, withMember } = await setUp();
    await run(MODERATOR, 'View', {});
    await run(MODERATOR, 'View', { topic: 'bugs' });
    expect(withMember).toHaveBeenCalledTimes(1);
    await run(OWNER, 'Create', TOPIC);
    expect(withMember).toHaveBeenCalledTimes(2);
    await run(MODERATOR, 'View', {});
    expect(withMember).toHaveBeenCalledTimes(3);
  });

  it('refuses at once a guild the bot has left, though its caller was just resolved', async () => {
    const { run, botIn } = await setUp();
    await run(MODERATOR, 'View', {});
    botIn.value = false;
    await expect(run(MODERATOR, 'View', {})).rejects.toMatchObject({
      code: 'NotFound',
      message: 'The bot is not in this guild',
    });
  });
});
