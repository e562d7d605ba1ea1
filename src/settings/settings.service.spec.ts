import { EventEmitter2 } from '@nestjs/event-emitter';
import type { DiscoveryService } from '@nestjs/core';
import { DataSource, type EntityManager, type EntityTarget, type ObjectLiteral } from 'typeorm';
import type { Clock } from 'src/common/time/clock';
import type { GuildAccessService } from 'src/guilds/guild-access.service';
import type { GuildContext } from 'src/guilds/guild-context';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { PermissionsService } from 'src/permissions/permissions.service';
import type { GuildSettingsCache, SettingsCache } from 'src/settings/settings-cache';
import { SettingsRevisionEntity } from 'src/settings/settings-revision.entity';
import { SettingsRegistry } from 'src/settings/settings-registry';
import { GuildSettingsWriters } from 'src/settings/settings-lock';
import type { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { AppConfig } from 'src/config/app-config';
import type { ExecutableOperation } from 'src/settings/schema/setting-schema';
import { SettingsService, type SettingsAuthor } from 'src/settings/settings.service';
import { FeedbackSetting, FeedbackTopicEntity } from 'test/fixtures/feedback.setting';

const GUILD = '500';
const OWNER = '10';
const MODERATOR = '11';
const OUTSIDER = '12';
const MOD_ROLE = '600';
const CHANNEL = '700';
const NOW = new Date('2026-11-23T12:00:00.000Z');

/** An in-memory table: the few repository calls the engine makes. */
class FakeTable {
  readonly rows: ObjectLiteral[] = [];

  /**
   * `versioned`: rows start at version 1, which insert writes back into the row it was given, as
   * TypeORM does for a `@VersionColumn`.
   */
  constructor(
    private readonly versioned = false,
    /** The primary key's properties: what an upsert matches rows by. */
    primary: readonly string[] = [],
  ) {
    this.metadata = { primaryColumns: primary.map((propertyName) => ({ propertyName })) };
  }

  readonly metadata: { primaryColumns: { propertyName: string }[] };

  find = ({ where }: { where: ObjectLiteral | ObjectLiteral[] }): Promise<ObjectLiteral[]> =>
    Promise.resolve(
      this.rows.filter((row) =>
        (Array.isArray(where) ? where : [where]).some((one) => this.matches(row, one)),
      ),
    );
  findOne = ({ where }: { where: ObjectLiteral }): Promise<ObjectLiteral | null> =>
    Promise.resolve(this.rows.find((row) => this.matches(row, where)) ?? null);
  create = (values: ObjectLiteral): ObjectLiteral => ({ ...values });
  insert = (rows: ObjectLiteral | ObjectLiteral[]): Promise<void> => {
    for (const row of Array.isArray(rows) ? rows : [rows]) {
      if (this.versioned) row.version ??= 1;
      this.rows.push({ ...row });
    }
    return Promise.resolve();
  };
  maximum = (column: string, where: ObjectLiteral): Promise<number | null> => {
    const values = this.rows
      .filter((row) => this.matches(row, where))
      .map((row) => Number(row[column]));
    return Promise.resolve(values.length > 0 ? Math.max(...values) : null);
  };
  update = (where: ObjectLiteral, values: ObjectLiteral): Promise<void> => {
    for (const row of this.rows) if (this.matches(row, where)) Object.assign(row, values);
    return Promise.resolve();
  };
  upsert = (
    rows: ObjectLiteral[],
    { conflictPaths }: { conflictPaths: string[] },
  ): Promise<void> => {
    for (const row of rows) {
      const key = Object.fromEntries(conflictPaths.map((path) => [path, row[path]]));
      const existing = this.rows.find((stored) => this.matches(stored, key));
      if (existing) Object.assign(existing, row);
      else this.rows.push({ ...row });
    }
    return Promise.resolve();
  };
  createQueryBuilder = (): object => ({
    delete: () => ({
      where: (criteria: ObjectLiteral[]) => ({
        execute: async () => {
          for (const where of criteria) await this.delete(where);
        },
      }),
    }),
  });
  delete = (where: ObjectLiteral): Promise<void> => {
    const index = this.rows.findIndex((row) => this.matches(row, where));
    if (index >= 0) this.rows.splice(index, 1);
    return Promise.resolve();
  };

  private matches(row: ObjectLiteral, where: ObjectLiteral): boolean {
    return Object.entries(where).every(([key, value]) => row[key] === value);
  }
}

/**
 * A guild's settings cache kept in a Map that every change empties, as a new version leaves the
 * old entries unread: what `SettingsCache` does in one process.
 */
function memoryCache(): { cache: GuildSettingsCache; changed: () => void; reads: string[] } {
  const values = new Map<string, unknown>();
  /** The keys asked of the loading side, in order. */
  const reads: string[] = [];
  const get = async <T>(key: string, load: () => Promise<T>): Promise<T> => {
    reads.push(key);
    if (!values.has(key)) values.set(key, await load());
    return values.get(key) as T;
  };
  return {
    cache: {
      get,
      getEncoded: async (key, load) => {
        const encoded = `encoded:${key}`;
        if (!values.has(encoded)) values.set(encoded, Buffer.from(await get(key, load)));
        return values.get(encoded) as Buffer;
      },
      cached: <T>(key: string) => values.get(key) as T | undefined,
      cachedEncoded: (key) => values.get(`encoded:${key}`) as Buffer | undefined,
    },
    changed: () => values.clear(),
    reads,
  };
}

/**
 * The engine over the feedback fixture setting, a guild of three users, and in-memory tables.
 * `inMemory`: settings data is cached in memory (else every read goes to the tables).
 */
async function setUp({ inMemory = false } = {}): Promise<{
  service: SettingsService;
  /** Runs an operation of the feedback setting as `userId`. */
  run: (userId: string, operation: ExecutableOperation, fields: unknown) => Promise<Buffer>;
  /** The same, as `execute` answers: synchronously when it needs nothing from outside memory. */
  execute: (
    userId: string,
    operation: ExecutableOperation,
    fields: unknown,
  ) => Buffer | Promise<Buffer>;
  feedback: FakeTable;
  revisions: ObjectLiteral[];
  changed: jest.Mock;
  /** The keys read through the in-memory cache's loading side. */
  reads: string[];
}> {
  const metadata = new DataSource({
    type: 'postgres',
    entities: [FeedbackTopicEntity, GuildRoleEntity, GuildMemberEntity, SettingsRevisionEntity],
  });
  await (metadata as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  const discovery = {
    getProviders: () => [{ instance: new FeedbackSetting() }],
  } as unknown as DiscoveryService;
  const registry = new SettingsRegistry(discovery, metadata);
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
  const memberOf = (_context: GuildContext, userId: string): object | null =>
    memberRoles[userId] ? { member: { roles: memberRoles[userId] } } : null;
  const guilds = {
    guildContext: () => Promise.resolve(context),
    withMember: (_guildId: string, userId: string) =>
      Promise.resolve({ context, user: memberOf(context, userId) }),
    memberOf: (_context: GuildContext, userId: string) =>
      Promise.resolve(memberOf(_context, userId)),
    cachedGuildContext: () => context,
    cachedMemberOf: memberOf,
  } as unknown as GuildAccessService;

  const tables = new Map<EntityTarget<ObjectLiteral>, FakeTable>([
    [GuildRoleEntity, new FakeTable()],
    [GuildMemberEntity, new FakeTable()],
    [FeedbackTopicEntity, new FakeTable(true, ['guild_id', 'topic'])],
    [SettingsRevisionEntity, new FakeTable()],
  ]);
  // The moderator's role grants reading feedback topics; the outsider is granted everything but
  // is not a member.
  tables.get(GuildRoleEntity)?.rows.push({
    guild_id: GUILD,
    role_id: MOD_ROLE,
    index: 1,
    perms: ['feedback_topics.view'],
  });
  tables
    .get(GuildMemberEntity)
    ?.rows.push({ guild_id: GUILD, user_id: OUTSIDER, perm_overrides: ['global.*'] });
  const repository = (entity: EntityTarget<ObjectLiteral>): FakeTable => {
    const table = tables.get(entity);
    if (!table) throw new Error('no such table');
    return table;
  };
  // The part of an EntityManager the engine uses: repositories and the entities' metadata.
  const manager = {
    query: () => Promise.resolve([]),
    getRepository: repository,
    connection: metadata,
  } as unknown as EntityManager;
  const dataSource = {
    getRepository: repository,
    manager,
    transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
  } as unknown as DataSource;
  const permissions = new PermissionsService(
    guilds,
    repository(GuildRoleEntity) as never,
    repository(GuildMemberEntity) as never,
  );
  const memory = memoryCache();
  const changed = jest.fn(() => {
    memory.changed();
    return Promise.resolve();
  });
  const uncached: GuildSettingsCache = {
    get: <T>(_key: string, load: () => Promise<T>) => load(),
    getEncoded: async (_key: string, load: () => Promise<string>) => Buffer.from(await load()),
    cached: () => undefined,
    cachedEncoded: () => undefined,
  };
  const cache = {
    forGuild: () => Promise.resolve(inMemory ? memory.cache : uncached),
    cachedForGuild: () => (inMemory ? memory.cache : undefined),
    changed,
  } as unknown as SettingsCache;
  const clock: Clock = { now: () => NOW, nowMs: () => NOW.getTime() };
  const service = new SettingsService(
    registry,
    guilds,
    permissions,
    cache,
    dataSource,
    clock,
    new EventEmitter2(),
    new GuildSettingsWriters(
      dataSource,
      { client: null } as unknown as RedisConnection,
      { redisKeyPrefix: 'test:' } as AppConfig,
    ),
    { enabled: false } as RateLimiter,
  );
  const execute = (
    userId: string,
    operation: ExecutableOperation,
    fields: unknown,
  ): Buffer | Promise<Buffer> =>
    service.execute(GUILD, authorOf(userId), { setting: 'feedback_topics', operation, fields });
  const run = async (
    userId: string,
    operation: ExecutableOperation,
    fields: unknown,
  ): Promise<Buffer> => execute(userId, operation, fields);
  const revisions = repository(SettingsRevisionEntity).rows;
  return {
    service,
    run,
    execute,
    feedback: repository(FeedbackTopicEntity),
    revisions,
    changed,
    reads: memory.reads,
  };
}

const SESSION = '0f8fad5b-d9cb-469f-a165-70867728950e';
const authorOf = (userId: string): SettingsAuthor => ({
  userId,
  sessionId: SESSION,
  sessionType: 'login',
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
      message: 'Invalid fields: 999 is not a channel of this guild',
    });
    expect(feedback.rows).toEqual([]);
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
    expect(feedback.rows).toEqual([stored(TOPIC, GUILD)]);
    expect(revisions).toEqual([
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
    expect(revisions.map((r): unknown[] => [r.revision, r.operation, r.key])).toEqual([
      [1, 'Create', { topic: 'bugs' }],
      [2, 'Create', { topic: 'ideas' }],
      [3, 'Delete', { topic: 'bugs' }],
    ]);
    expect(revisions[2]).toMatchObject({ after: null, before: expect.objectContaining(TOPIC) });
  });

  it('refuses a Delete naming a version the row has moved on from, and deletes at the current one', async () => {
    const { run, feedback, revisions } = await setUp();
    await run(OWNER, 'Create', TOPIC);
    feedback.rows[0].version = 3;
    await expect(run(OWNER, 'Delete', { topic: 'bugs', version: 2 })).rejects.toMatchObject({
      code: 'VersionConflict',
      message:
        'feedback_topics entry topic bugs has changed since you read it (it is at version 3, you sent 2); read it again and retry',
      details: [{ field: 'version' }],
    });
    expect(feedback.rows).toHaveLength(1);
    expect(revisions).toHaveLength(1);
    await run(OWNER, 'Delete', { topic: 'bugs', version: 3 });
    expect(feedback.rows).toEqual([]);
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
    feedback.rows.push(stored(TOPIC, GUILD), stored({ ...TOPIC, topic: 'other' }, '501'));
    const bytes = await run(MODERATOR, 'View', {});
    expect(answer(bytes)).toEqual({
      type: 'Ok',
      data: [expect.objectContaining({ topic: 'bugs', created_at: NOW.toISOString() })],
    });
  });

  it('answers a View held in memory synchronously, and a change is read at once', async () => {
    const { run, execute, reads } = await setUp({ inMemory: true });
    await run(OWNER, 'Create', TOPIC);
    const first = execute(MODERATOR, 'View', {});
    expect(first).toBeInstanceOf(Promise);
    const loaded = await first;
    const repeated = execute(MODERATOR, 'View', {});
    expect(repeated).toBeInstanceOf(Buffer);
    expect(repeated).toBe(loaded);
    // Another query is another answer: loaded for the caller already read, then held.
    reads.length = 0;
    const other = execute(MODERATOR, 'View', { topic: 'bugs' });
    expect(other).toBeInstanceOf(Promise);
    await other;
    expect(reads).toEqual(['view:feedback_topics:{"topic":"bugs"}']);
    expect(execute(MODERATOR, 'View', { topic: 'bugs' })).toBeInstanceOf(Buffer);
    await run(OWNER, 'Create', { ...TOPIC, topic: 'other' });
    const afterChange = execute(MODERATOR, 'View', {});
    expect(afterChange).toBeInstanceOf(Promise);
    expect(answer(await afterChange)).toMatchObject({
      data: [{ topic: 'bugs' }, { topic: 'other' }],
    });
  });

  it('refuses from memory as it refuses otherwise: a rejection, with the same error', async () => {
    const { run, execute } = await setUp({ inMemory: true });
    await run(MODERATOR, 'View', {});
    const refusals = [
      execute(OUTSIDER, 'View', {}),
      execute(MODERATOR, 'View', { unknown_field: 1 }),
    ];
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(Promise);
    await expect(refusals[0]).rejects.toMatchObject({
      code: 'Restricted',
      message: 'You need the permission feedback_topics.view in this guild',
    });
    await expect(refusals[1]).rejects.toMatchObject({ code: 'BadRequest' });
  });
});
