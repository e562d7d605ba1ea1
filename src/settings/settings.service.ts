import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource, type EntityManager, type ObjectLiteral, type Repository } from 'typeorm';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException, type ErrorDetail } from 'src/common/errors/app.exception';
import { isUniqueViolation } from 'src/common/errors/database-errors';
import { ErrorCode } from 'src/common/errors/error-code';
import {
  GuildAccessService,
  type GuildContext,
  type MemberAccess,
} from 'src/guilds/guild-access.service';
import type { PermissionGuild, PermissionMember } from 'src/permissions/edit-checks';
import { PermissionsService } from 'src/permissions/permissions.service';
import { hasPerm } from 'src/permissions/permission-string';
import type { SettingRow } from 'src/settings/setting-definition';
import { diffRows } from 'src/settings/revision-diff';
import { SettingsChangedEvent, summariseRevision } from 'src/settings/settings.events';
import {
  SettingsRevisionEntity,
  type RevisionSessionType,
} from 'src/settings/settings-revision.entity';
import { SettingsCache, type GuildSettingsCache } from 'src/settings/settings-cache';
import { lockGuildSettings } from 'src/settings/settings-lock';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/settings-registry';
import {
  primaryKeyOf,
  VERSION_COLUMN,
  type ExecutableOperation,
} from 'src/settings/schema/setting-schema';
import { botProblems, referenceProblems } from 'src/settings/setting-checks';
import {
  autoFilled,
  defaultOrder,
  describeKey,
  generateKeys,
  keyOf,
  offers,
  stableJson,
  storedColumns,
  toApi,
  toEntity,
  valuesOf,
  viewFilters,
} from 'src/settings/setting-rows';
import { MAX_VIEW_LIMIT } from 'src/settings/schema/validation-schema';
import { denialMessage } from 'src/settings/settings-denials';
import { Clock } from 'src/common/time/clock';
import { summariseDetails } from 'src/common/validation/validation-details';

/** Who runs an operation: the user, and the session or API token used (none from the CLI). */
export interface SettingsAuthor {
  userId: string;
  sessionId: string | null;
  sessionType: RevisionSessionType | null;
  /** A scoped API token's permission strings: the user's own are limited to them. */
  scope?: readonly string[];
}

/** The author of a change made through the API: the user, their session or token, its scope. */
export function authorOf(session: AuthenticatedSession): SettingsAuthor {
  return {
    userId: session.userId,
    sessionId: session.id,
    sessionType: session.type,
    scope: session.scope?.permissions ?? undefined,
  };
}

/** What `execute` takes: a setting, one of its operations, and the operation's fields. */
export interface SettingsRequest {
  setting: string;
  operation: ExecutableOperation;
  fields: unknown;
}

type WriteOperation = Exclude<ExecutableOperation, 'View'>;

/** A write that passed every check made outside the transaction. */
interface CheckedWrite {
  setting: RegisteredSetting;
  operation: WriteOperation;
  permission: string;
  /** Validated and prepared. */
  fields: unknown;
  /** The platform members the fields name (the targets a setting's rule may judge). */
  members: ReadonlyMap<string, MemberAccess | null>;
  /** The revision this write undoes (a rollback), else null. */
  reverts: number | null;
}

/** What a write produced: its answer's data, and the revisions it recorded. */
export interface AppliedWrite {
  data: unknown;
  revisions: SettingsRevisionEntity[];
}

/** A write's outcome in a trial: what it produced, or the refusal it met. */
export type WriteOutcome = ({ ok: true } & AppliedWrite) | { ok: false; error: AppException };

/** Ends a trial's transaction without committing it. */
const NOT_COMMITTED = new Error('not committed');

/** What was thrown, as a rejection: callers of a promise-returning method expect no throw. */
function rejection(error: unknown): Promise<never> {
  return Promise.reject(error instanceof Error ? error : new Error(String(error)));
}

/** A non-member holds no permission strings (the owner is always a member). */
function nonMember(userId: string): PermissionMember {
  return { userId, roles: [], overrides: [] };
}

function callerOf(
  context: GuildContext,
  guild: PermissionGuild,
  own: PermissionMember,
  member: MemberAccess | null,
  scope: readonly string[] | undefined,
): Caller {
  return { context, guild, author: scope ? { ...own, scope } : own, isMember: member !== null };
}

/** Where a View's answer is cached: the setting and the query. */
function viewKey(setting: RegisteredSetting, fields: unknown): string {
  return `view:${setting.schema.id}:${stableJson(fields)}`;
}

/** A refusal is an AppException; anything else is a failure, and stays one. */
function refusalOf(error: unknown): WriteOutcome {
  if (error instanceof AppException) return { ok: false, error };
  throw error;
}

/** One entry a change touched: its key, and its state before and after (null: absent). */
interface EntryChange {
  key: Record<string, unknown>;
  before: SettingRow | null;
  after: SettingRow | null;
}

interface Caller {
  context: GuildContext;
  guild: PermissionGuild;
  author: PermissionMember;
  /** A non-member holds no permission strings, whatever is stored for them. */
  isMember: boolean;
}

/**
 * The settings engine (DESIGN §7): for any declared setting, checks the operation, the caller's
 * `<setting>.<operation>` permission, the fields (its validation_template), references against the
 * live guild and the bot's permissions, then applies the change in one transaction with one
 * revision per entry changed, and answers `{type: "Ok", data}`.
 */
@Injectable()
export class SettingsService {
  constructor(
    private readonly registry: SettingsRegistry,
    private readonly guilds: GuildAccessService,
    private readonly permissions: PermissionsService,
    private readonly cache: SettingsCache,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly events: EventEmitter2,
  ) {}

  /** Every module's settings, for a guild the bot is in (membership not required). */
  async list(
    guildId: string,
    caller: string,
  ): Promise<Record<string, { type: 'Ok'; data: unknown[] }>> {
    await this.guilds.assertBotIn(guildId, caller);
    return this.registry.groups();
  }

  /**
   * Runs one operation and answers its JSON (`{"type":"Ok","data":…}`), encoded: a View answer
   * comes from the guild's cache that way, so repeated reads of a large setting are neither
   * serialised nor encoded again. A View whose answer and caller are all in memory is answered
   * synchronously, without a promise per request; a refusal is a rejection either way.
   */
  execute(
    guildId: string,
    author: SettingsAuthor,
    request: SettingsRequest,
  ): Buffer | Promise<Buffer> {
    if (request.operation === 'View') {
      try {
        const answer = this.viewFromMemory(guildId, author, request);
        if (answer) return answer;
      } catch (error) {
        return rejection(error);
      }
    }
    return this.executeLoading(guildId, author, request);
  }

  /**
   * A View whose caller is in memory (the same checks, in the same order): its answer from memory,
   * or loaded for this caller; undefined when the caller must be loaded.
   */
  private viewFromMemory(
    guildId: string,
    author: SettingsAuthor,
    request: SettingsRequest,
  ): Buffer | Promise<Buffer> | undefined {
    const cache = this.cache.cachedForGuild(guildId);
    const caller = cache && this.cachedCaller(guildId, author.userId, cache, author.scope);
    if (!cache || !caller) return undefined;
    const { setting, fields } = this.checked(caller, request);
    return (
      cache.cachedEncoded(viewKey(setting, fields)) ?? this.view(setting, guildId, fields, cache)
    );
  }

  /** `execute`, reading or loading whatever it needs. */
  private async executeLoading(
    guildId: string,
    author: SettingsAuthor,
    request: SettingsRequest,
  ): Promise<Buffer> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const checked = this.checked(caller, request);
    if (checked.operation === 'View') {
      return this.view(checked.setting, guildId, checked.fields, cache);
    }
    const [applied] = await this.apply(caller, author, [
      await this.withMembers(caller, { ...checked, operation: checked.operation }, null),
    ]);
    return Buffer.from(JSON.stringify({ type: 'Ok', data: applied.data }));
  }

  /**
   * Several writes as one change: each checked exactly as `execute` checks it (permission,
   * validation, references, the bot's permissions, the setting's own rule), then all applied in
   * one transaction, or none. Answers each write's data and the revisions it recorded.
   */
  async executeAll(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly (SettingsRequest & { reverts?: number })[],
  ): Promise<AppliedWrite[]> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const writes: CheckedWrite[] = [];
    for (const request of requests) {
      writes.push(await this.checkedWrite(caller, request, request.reverts ?? null));
    }
    return this.apply(caller, author, writes);
  }

  /**
   * Several writes judged one by one and applied as one change only if none is refused: each is
   * checked as `execute` checks it, the ones that pass run in order in one transaction (each in a
   * savepoint, so a refusal in the transaction leaves the others' effects), and the transaction
   * commits only when `apply` is set and nothing was refused. Answers every write's outcome:
   * what it produced, or why it was refused. A dry run (`apply` false) therefore reports exactly
   * what applying would do, refusals included, and changes nothing.
   */
  async trial(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly SettingsRequest[],
    apply: boolean,
  ): Promise<{ committed: boolean; outcomes: WriteOutcome[] }> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const outcomes: WriteOutcome[] = [];
    const writes: (CheckedWrite | null)[] = [];
    for (const request of requests) {
      try {
        writes.push(await this.checkedWrite(caller, request, null));
        outcomes.push({ ok: true, data: null, revisions: [] });
      } catch (error) {
        outcomes.push(refusalOf(error));
        writes.push(null);
      }
    }
    let committed = false;
    try {
      await this.dataSource.transaction(async (manager) => {
        await lockGuildSettings(manager, guildId);
        for (const [i, write] of writes.entries()) {
          if (!write) continue;
          try {
            outcomes[i] = await manager.transaction(async (savepoint) => {
              const locked = await this.lockedCaller(caller, savepoint);
              this.requirePermission(locked, write.permission);
              return { ok: true, ...(await this.change(savepoint, locked, author, write)) };
            });
          } catch (error) {
            outcomes[i] = refusalOf(error);
          }
        }
        if (!apply || outcomes.some((outcome) => !outcome.ok)) throw NOT_COMMITTED;
      });
      committed = true;
    } catch (error) {
      if (error !== NOT_COMMITTED) throw error;
    }
    if (committed) {
      await this.cache.changed(guildId);
      this.announce(
        guildId,
        outcomes.flatMap((outcome) => (outcome.ok ? outcome.revisions : [])),
      );
    }
    return { committed, outcomes };
  }

  /**
   * The checks that need no transaction, in DESIGN §7's order: the setting and operation, the
   * permission (from the cache; a write is checked again in its transaction, against the data as
   * it is when the write is applied), the fields, then references and the bot's permissions.
   */
  private checked(
    caller: Caller,
    request: SettingsRequest,
  ): {
    setting: RegisteredSetting;
    operation: ExecutableOperation;
    permission: string;
    fields: unknown;
  } {
    const setting = this.registry.get(request.setting);
    if (!setting) throw new AppException(ErrorCode.NotFound, `Unknown setting ${request.setting}`);
    const operation = request.operation;
    if (!offers(setting, operation)) {
      const message = `${setting.schema.id} does not offer ${operation}`;
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'operation', message }]);
    }
    const permission = `${setting.schema.id}.${operation.toLowerCase()}`;
    this.requirePermission(caller, permission);
    const checked = setting.validator.check(operation, request.fields);
    if (!checked.ok) throw invalid(checked.details);
    let fields = checked.fields;
    const prepare = setting.prepare;
    if (prepare && operation !== 'View') {
      fields = Array.isArray(fields)
        ? (fields as SettingRow[]).map(prepare)
        : prepare(fields as SettingRow);
    }
    if (operation !== 'View' && operation !== 'Delete') {
      const problems = [
        ...referenceProblems(setting, caller.context, fields),
        ...botProblems(setting, caller.context, fields),
      ];
      if (problems.length > 0) throw invalid(problems);
    }
    return { setting, operation, permission, fields };
  }

  /** A write (never a View) checked as `execute` checks it, with the members it names. */
  private async checkedWrite(
    caller: Caller,
    request: SettingsRequest,
    reverts: number | null,
  ): Promise<CheckedWrite> {
    const checked = this.checked(caller, request);
    if (checked.operation === 'View') throw new Error('a write was expected; View reads');
    return this.withMembers(caller, { ...checked, operation: checked.operation }, reverts);
  }

  /**
   * The platform members a write names, looked up before the guild's lock is taken: while it is
   * held, only the database is waited on, so writers queued behind it do not hold connections.
   */
  private async withMembers(
    caller: Caller,
    write: Omit<CheckedWrite, 'members' | 'reverts'>,
    reverts: number | null,
  ): Promise<CheckedWrite> {
    return {
      ...write,
      reverts,
      members: await this.membersNamedIn(write.setting, caller.context, write.fields),
    };
  }

  /** Applies checked writes in one transaction under the guild's settings lock. */
  private async apply(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
  ): Promise<AppliedWrite[]> {
    const guildId = caller.context.guild.id;
    const applied = await this.dataSource.transaction(async (manager) => {
      // One settings writer per guild at a time, taken first (so no deadlock), and the permission
      // data read after it: a concurrent demotion is either committed and seen here, or waits.
      await lockGuildSettings(manager, guildId);
      const results: AppliedWrite[] = [];
      for (const write of writes) {
        // Read again for each write: an earlier one of the same change may have altered them.
        const locked = await this.lockedCaller(caller, manager);
        this.requirePermission(locked, write.permission);
        results.push(await this.change(manager, locked, author, write));
      }
      return results;
    });
    await this.cache.changed(guildId);
    this.announce(
      guildId,
      applied.flatMap((write) => write.revisions),
    );
    return applied;
  }

  /** Tells the event streams of a committed change (listeners run synchronously and must not throw). */
  private announce(guildId: string, revisions: readonly SettingsRevisionEntity[]): void {
    if (revisions.length === 0) return;
    this.events.emit(
      SettingsChangedEvent.event,
      new SettingsChangedEvent(guildId, revisions.map(summariseRevision)),
    );
  }

  /** What the caller may do in the guild: a test of one permission string (a token's scope applied). */
  async permissionsIn(
    guildId: string,
    author: SettingsAuthor,
  ): Promise<(permission: string) => boolean> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const held = this.permissions.resolved(caller.guild, caller.author);
    return (permission) => hasPerm(held, permission);
  }

  /**
   * Refuses a caller who does not hold `permission` in the guild (403 `Restricted`, naming a
   * token's scope where that is what limits it); 404 for a guild the bot is not in.
   */
  async requirePermissionIn(
    guildId: string,
    author: SettingsAuthor,
    permission: string,
  ): Promise<void> {
    const cache = await this.cache.forGuild(guildId);
    this.requirePermission(
      await this.caller(guildId, author.userId, cache, author.scope),
      permission,
    );
  }

  private async caller(
    guildId: string,
    userId: string,
    cache: GuildSettingsCache,
    scope: readonly string[] | undefined,
  ): Promise<Caller> {
    const { context, user: member } = await this.guilds.withMember(guildId, userId);
    const guild = await this.permissions.guild(context, cache);
    const own = member
      ? await this.permissions.member(guildId, userId, member.member.roles, cache)
      : nonMember(userId);
    return callerOf(context, guild, own, member, scope);
  }

  /** `caller` from memory, synchronously; undefined when anything must be loaded. */
  private cachedCaller(
    guildId: string,
    userId: string,
    cache: GuildSettingsCache,
    scope: readonly string[] | undefined,
  ): Caller | undefined {
    const context = this.guilds.cachedGuildContext(guildId);
    const member = context && this.guilds.cachedMemberOf(context, userId);
    if (!context || member === undefined) return undefined;
    const guild = this.permissions.cachedGuild(context, cache);
    const own = member
      ? this.permissions.cachedMember(userId, member.member.roles, cache)
      : nonMember(userId);
    return guild && own && callerOf(context, guild, own, member, scope);
  }

  /** The caller's permission data as the transaction sees it (after the guild's settings lock). */
  private async lockedCaller(caller: Caller, manager: EntityManager): Promise<Caller> {
    const { context, author, isMember } = caller;
    const guild = await this.permissions.guild(context, manager);
    const locked = isMember
      ? await this.permissions.member(context.guild.id, author.userId, author.roles, manager)
      : author;
    return {
      context,
      guild,
      author: author.scope ? { ...locked, scope: author.scope } : locked,
      isMember,
    };
  }

  private requirePermission(caller: Caller, permission: string): void {
    if (this.permissions.holds(caller.guild, caller.author, permission)) return;
    const { scope, ...own } = caller.author;
    if (scope && hasPerm(this.permissions.resolved(caller.guild, own), permission)) {
      throw new AppException(
        ErrorCode.Restricted,
        `This API token is limited to the permissions ${scope.join(', ')}; it cannot use ${permission}`,
      );
    }
    throw new AppException(
      ErrorCode.Restricted,
      `You need the permission ${permission} in this guild`,
    );
  }

  /** The View answer as JSON, encoded. */
  private view(
    setting: RegisteredSetting,
    guildId: string,
    fields: unknown,
    cache: GuildSettingsCache,
  ): Promise<Buffer> {
    return cache.getEncoded(viewKey(setting, fields), async () =>
      JSON.stringify({ type: 'Ok', data: await this.viewFromDatabase(setting, guildId, fields) }),
    );
  }

  private async viewFromDatabase(
    setting: RegisteredSetting,
    guildId: string,
    fields: unknown,
  ): Promise<SettingRow[]> {
    const { limit, offset, ...filters } = fields as { limit?: number; offset?: number };
    const rows = await this.dataSource.getRepository(setting.entity).find({
      // The guild last: no filter can replace it (column ids are also checked at boot).
      where: { ...viewFilters(setting, filters), guild_id: guildId },
      order: setting.order ?? defaultOrder(setting),
      take: limit ?? MAX_VIEW_LIMIT,
      skip: offset ?? 0,
    });
    return rows.map((row) => toApi(setting, row, true));
  }

  /** The platform members of the users the fields name (the targets a setting's rule may judge). */
  private async membersNamedIn(
    setting: RegisteredSetting,
    context: GuildContext,
    fields: unknown,
  ): Promise<ReadonlyMap<string, MemberAccess | null>> {
    const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
    const userIds = new Set<string>();
    for (const column of storedColumns(setting)) {
      const type = column.column_type;
      if (type.type === 'Widget' || type.inner.type !== 'String' || type.inner.kind !== 'user') {
        continue;
      }
      for (const row of rows) for (const id of valuesOf(row[column.id])) userIds.add(id);
    }
    const ids = [...userIds];
    const members = await Promise.all(ids.map((id) => this.guilds.memberOf(context, id)));
    return new Map(ids.map((id, i) => [id, members[i]]));
  }

  private async change(
    manager: EntityManager,
    caller: Caller,
    author: SettingsAuthor,
    write: CheckedWrite,
  ): Promise<AppliedWrite> {
    const { setting, operation, fields, members } = write;
    const repository = manager.getRepository(setting.entity);
    const guildId = caller.context.guild.id;
    const items = operation === 'Reorder' ? (fields as SettingRow[]) : [fields as SettingRow];
    if (operation === 'Create') generateKeys(setting, items[0]);
    const current: ObjectLiteral[] = [];
    for (const item of items) {
      const row = await repository.findOne({
        where: { ...keyOf(setting, item), guild_id: guildId },
        lock: { mode: 'pessimistic_write' },
      });
      if (operation === 'Create') {
        if (row) throw alreadyExists(setting, item);
      } else if (!row) {
        throw new AppException(
          ErrorCode.NotFound,
          `No ${setting.schema.id} entry ${describeKey(setting, item)}`,
        );
      } else {
        requireVersion(setting, row, item);
        current.push(row);
      }
    }
    const before = current.map((row) => toApi(setting, row, false));
    if (setting.authorize) {
      const check = await setting.authorize({
        operation,
        fields,
        current: before,
        guild: caller.guild,
        author: caller.author,
        memberOf: (userId) => this.memberOf(caller.context, userId, manager, members),
        manager,
      });
      if (!check.allowed) throw new AppException(ErrorCode.Restricted, denialMessage(check.denial));
    }
    const now = this.clock.now();
    let after: ObjectLiteral[] = [];
    let data: unknown;
    switch (operation) {
      case 'Create': {
        const row = repository.create({
          ...toEntity(setting, items[0]),
          guild_id: guildId,
          ...autoFilled(setting, caller.author.userId, now, true),
        });
        // An insert, never `save`: save would turn a row created meanwhile into an update.
        await insertNew(repository, row, () => alreadyExists(setting, items[0]));
        after = [row];
        data = toApi(setting, after[0], true);
        break;
      }
      case 'Update': {
        // The version is checked above and raised by the save; a client's value never lands.
        const values = toEntity(setting, items[0]);
        delete values[VERSION_COLUMN];
        const row = repository.merge(current[0], {
          ...values,
          ...autoFilled(setting, caller.author.userId, now, false),
        });
        after = [await repository.save(row)];
        data = toApi(setting, after[0], true);
        break;
      }
      case 'Delete':
        await repository.delete({ ...keyOf(setting, items[0]), guild_id: guildId });
        data = keyOf(setting, items[0]);
        break;
      case 'Reorder': {
        const indexBy = setting.schema.index_by as string;
        after = current.map((row, i) =>
          repository.merge(row, {
            [indexBy]: items[i][indexBy],
            ...autoFilled(setting, caller.author.userId, now, false),
          }),
        );
        after = await repository.save(after);
        data = after.map((row) => toApi(setting, row, true));
        break;
      }
    }
    const changes: EntryChange[] =
      operation === 'Create'
        ? [{ key: keyOf(setting, items[0]), before: null, after: toApi(setting, after[0], false) }]
        : current.map((row, i) => ({
            key: keyOf(setting, toApi(setting, row, false)),
            before: before[i],
            after: operation === 'Delete' ? null : toApi(setting, after[i], false),
          }));
    const revisions = await this.recordRevisions(manager, guildId, write, author, now, changes);
    return { data, revisions };
  }

  /**
   * One revision per entry changed, numbered on from the guild's last. The caller holds the guild's
   * settings lock, so numbers are handed out one writer at a time; the primary key (guild,
   * revision) refuses a duplicate should anything write without the lock.
   */
  private async recordRevisions(
    manager: EntityManager,
    guildId: string,
    write: CheckedWrite,
    author: SettingsAuthor,
    now: Date,
    changes: readonly EntryChange[],
  ): Promise<SettingsRevisionEntity[]> {
    // As the engine's other tables: rows of JSON values, which TypeORM's entity types cannot say.
    const repository = manager.getRepository<ObjectLiteral>(SettingsRevisionEntity);
    const last = (await repository.maximum('revision', { guild_id: guildId })) ?? 0;
    const revisions = changes.map((change, i) =>
      Object.assign(new SettingsRevisionEntity(), {
        guild_id: guildId,
        revision: last + 1 + i,
        setting: write.setting.schema.id,
        key: change.key,
        operation: write.operation,
        before: change.before,
        after: change.after,
        diff: diffRows(change.before, change.after),
        user_id: author.userId,
        session_id: author.sessionId,
        session_type: author.sessionType,
        reverts: write.reverts,
        created_at: now,
      }),
    );
    await repository.insert(revisions);
    return revisions;
  }

  private async memberOf(
    context: GuildContext,
    userId: string,
    manager: EntityManager,
    members: ReadonlyMap<string, MemberAccess | null>,
  ): Promise<PermissionMember> {
    // A user the fields do not name is looked up now (no built-in rule asks for one).
    const member = members.has(userId)
      ? (members.get(userId) ?? null)
      : await this.guilds.memberOf(context, userId);
    return this.permissions.member(context.guild.id, userId, member?.member.roles ?? [], manager);
  }
}

/**
 * Inserts a new row; a unique violation (a writer that does not take the guild's settings lock
 * inserted the same key first) is the same answer as the pre-check's.
 */
async function insertNew(
  repository: Repository<ObjectLiteral>,
  row: ObjectLiteral,
  exists: () => AppException,
): Promise<void> {
  try {
    await repository.insert(row);
  } catch (error) {
    throw isUniqueViolation(error) ? exists() : error;
  }
}

function invalid(details: ErrorDetail[]): AppException {
  return new AppException(
    ErrorCode.BadRequest,
    summariseDetails(details, 'Invalid fields'),
    details,
  );
}

/**
 * Update and Delete may name the version of the entry the client read: a row that has moved on
 * since is refused, so one admin's change never silently overwrites another's.
 */
function requireVersion(setting: RegisteredSetting, row: ObjectLiteral, item: SettingRow): void {
  const expected = item[VERSION_COLUMN] as number | undefined;
  if (expected === undefined || !(VERSION_COLUMN in row) || row[VERSION_COLUMN] === expected)
    return;
  const message = `${setting.schema.id} entry ${describeKey(setting, item)} has changed since you read it (it is at version ${String(row[VERSION_COLUMN])}, you sent ${String(expected)}); read it again and retry`;
  throw new AppException(ErrorCode.VersionConflict, message, [{ field: VERSION_COLUMN, message }]);
}

function alreadyExists(setting: RegisteredSetting, values: SettingRow): AppException {
  const message = `${setting.schema.id} already has an entry ${describeKey(setting, values)}; use Update`;
  const field = primaryKeyOf(setting.schema)[0]?.id ?? 'fields';
  return new AppException(ErrorCode.BadRequest, message, [{ field, message }]);
}
