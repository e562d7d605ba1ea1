import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource, type EntityManager, type ObjectLiteral, type Repository } from 'typeorm';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException, type ErrorDetail } from 'src/common/errors/app.exception';
import { isUniqueViolation } from 'src/common/errors/database-errors';
import { ErrorCode } from 'src/common/errors/error-code';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import { type GuildContext, type MemberAccess } from 'src/guilds/guild-context';
import type { PermissionMember } from 'src/permissions/edit-checks';
import {
  PermissionsService,
  type PermissionTest,
  type ResolvedCaller,
} from 'src/permissions/permissions.service';
import type { SettingRow } from 'src/settings/setting-definition';
import { diffRows } from 'src/settings/revision-diff';
import { SettingsChangedEvent, summariseRevision } from 'src/settings/settings.events';
import { SettingsRevisionEntity } from 'src/settings/settings-revision.entity';
import { SettingsCache, type GuildSettingsCache } from 'src/settings/settings-cache';
import { GuildSettingsWriters } from 'src/settings/settings-lock';
import { ChangeState } from 'src/settings/change-state';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { mapConcurrent } from 'src/common/async/map-concurrent';
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
import type { SessionType } from 'src/common/auth/authenticated-session';

/** Who runs an operation: the user, and the session or API token used (none from the CLI). */
export interface SettingsAuthor {
  userId: string;
  sessionId: string | null;
  sessionType: SessionType | null;
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
  /** Validated and prepared (a key the service chooses is chosen). */
  fields: unknown;
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

/** The platform members of the users the fields name, looked up once per request. */
type NamedMembers = ReadonlyMap<string, MemberAccess | null>;

/**
 * The most users one request may name in member columns: each may cost a platform lookup
 * (docs/request-costs.md). A larger change is refused with this number, before any lookup.
 */
export const MAX_NAMED_MEMBERS = 25;

/**
 * The most entries one change writes (an import, a restore, several writes at once): measured by
 * `npm run bench:costs` at under 0.2 s on the embedded engine, whose one connection every other
 * request waits for meanwhile (docs/request-costs.md).
 */
export const MAX_CHANGE_ENTRIES = 500;

/** Member lookups one request runs at once. */
const MEMBER_LOOKUPS_AT_ONCE = 5;

/** Rows (entries or revisions) stored in one statement. */
const ROWS_PER_INSERT = 500;

/** What one write does to the stored rows, applied in order. */
type Effect =
  | { type: 'insert'; key: Record<string, unknown>; row: ObjectLiteral }
  | { type: 'update'; key: Record<string, unknown>; row: ObjectLiteral }
  | { type: 'delete'; key: Record<string, unknown> };

/** A write planned against the rows as the change sees them: its answer and its effects. */
interface PlannedWrite {
  data: unknown;
  changes: EntryChange[];
  effects: Effect[];
}

/** The caller of an operation, resolved: see `PermissionsService.resolve`. */
type Caller = ResolvedCaller;

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

/**
 * The engine (docs/settings-engine.md): for a declared setting, checks the operation, the caller's
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
    private readonly writers: GuildSettingsWriters,
    private readonly limiter: RateLimiter,
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
   * serialised nor encoded again.
   */
  async execute(
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
    const write = writeOf({ ...checked, operation: checked.operation }, null);
    const [applied] = await this.commitOrThrow(caller, author, [write]);
    return Buffer.from(JSON.stringify({ type: 'Ok', data: applied.data }));
  }

  /**
   * Several writes as one change: each checked exactly as `execute` checks it (permission,
   * validation, references, the bot's permissions, the setting's own rule), then all applied in
   * one transaction, or none (the first refusal is thrown). Answers each write's data and the
   * revisions it recorded.
   */
  async executeAll(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly (SettingsRequest & { reverts?: number })[],
  ): Promise<AppliedWrite[]> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const writes = requests.map((request) => this.checkedWrite(caller, request, request.reverts));
    return this.commitOrThrow(caller, author, writes, { bulk: true });
  }

  /**
   * Several writes judged one by one and applied as one change only if none is refused: each is
   * checked as `execute` checks it, then planned in order against the stored rows as the change
   * sees them (a refused write leaves no effect for the ones after it). With `apply`, and
   * nothing refused, the change is stored in one transaction; otherwise nothing is written, not
   * even in a transaction rolled back: a dry run reads the rows its writes touch and computes the
   * rest. Answers every write's outcome: what it produced, or why it was refused.
   */
  async trial(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly SettingsRequest[],
    { apply }: { apply: boolean },
  ): Promise<{ committed: boolean; outcomes: WriteOutcome[] }> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, author.userId, cache, author.scope);
    const outcomes: WriteOutcome[] = [];
    const passed: { index: number; write: CheckedWrite }[] = [];
    for (const [index, request] of requests.entries()) {
      try {
        passed.push({ index, write: this.checkedWrite(caller, request) });
        outcomes.push({ ok: true, data: null, revisions: [] });
      } catch (error) {
        outcomes.push(refusalOf(error));
      }
    }
    // No lock and no transaction for a change with nothing to write.
    if (passed.length === 0) return { committed: false, outcomes };
    const writes = passed.map(({ write }) => write);
    requireBounded(writes);
    const members = await this.membersNamedIn(caller, author, writes);
    if (apply && passed.length === requests.length) {
      const commit = await this.commit(caller, author, writes, members, { bulk: true });
      if (commit.committed) {
        return {
          committed: true,
          outcomes: commit.applied.map((applied) => ({ ok: true, ...applied })),
        };
      }
      // Refused by a change stored meanwhile: reported as a dry run reports it, below.
    }
    const planned = await this.perform(
      new ChangeState(this.dataSource.manager, caller.context.guild.id, false),
      caller,
      author,
      writes,
      members,
      { store: null },
    );
    for (const [i, { index }] of passed.entries()) outcomes[index] = planned[i];
    return { committed: false, outcomes };
  }

  /**
   * The checks that need no transaction, in docs/settings-engine.md's order: the setting and
   * operation, the permission (from the cache; a write is checked again against the rows it is
   * applied to), the fields, then references and the bot's permissions.
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

  /** A write (never a View) checked as `execute` checks it. */
  private checkedWrite(
    caller: Caller,
    request: SettingsRequest,
    reverts: number | null = null,
  ): CheckedWrite {
    const checked = this.checked(caller, request);
    if (checked.operation === 'View') {
      const message = 'View reads; a change holds only writes';
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'operation', message }]);
    }
    return writeOf({ ...checked, operation: checked.operation }, reverts);
  }

  /** `commit`, a refusal thrown. */
  private async commitOrThrow(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    options: { bulk?: boolean } = {},
  ): Promise<AppliedWrite[]> {
    requireBounded(writes);
    const members = await this.membersNamedIn(caller, author, writes);
    const commit = await this.commit(caller, author, writes, members, options);
    if (!commit.committed) throw commit.refusal;
    return commit.applied;
  }

  /**
   * Stores checked writes as one change: in one transaction under the guild's settings lock (a
   * writer waits its turn without a connection: GuildSettingsWriters), each planned against the
   * rows as the transaction sees them and stored at once; the first refusal rolls it all back.
   */
  private async commit(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    members: NamedMembers,
    { bulk = false }: { bulk?: boolean },
  ): Promise<
    { committed: true; applied: AppliedWrite[] } | { committed: false; refusal: AppException }
  > {
    const guildId = caller.context.guild.id;
    const refused = new Error('refused');
    let refusal: AppException | undefined;
    let applied: AppliedWrite[];
    try {
      applied = await this.writers.write(
        guildId,
        async (manager) => {
          const store = new EffectWriter(manager, guildId);
          const outcomes = await this.perform(
            new ChangeState(manager, guildId, true, () => store.flush()),
            caller,
            author,
            writes,
            members,
            { store },
          );
          const results: AppliedWrite[] = [];
          for (const outcome of outcomes) {
            if (!outcome.ok) {
              refusal = outcome.error;
              throw refused;
            }
            results.push(outcome);
          }
          return results;
        },
        { bulk },
      );
    } catch (error) {
      if (error === refused && refusal) return { committed: false, refusal };
      throw error;
    }
    await this.cache.changed(guildId);
    this.announce(
      guildId,
      applied.flatMap((write) => write.revisions),
    );
    return { committed: true, applied };
  }

  /**
   * Plans each write in order against `state` (the permission data read again through it, so an
   * earlier write of the same change is seen) and, with a `store`, writes its effects and then
   * the revisions. A refused write leaves no effect; with a store, planning stops at it (the
   * transaction is rolled back).
   */
  private async perform(
    state: ChangeState,
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    members: NamedMembers,
    { store }: { store: EffectWriter | null },
  ): Promise<WriteOutcome[]> {
    const guildId = caller.context.guild.id;
    for (const [entity, keys] of keysByEntity(writes)) await state.load(entity, keys);
    const now = this.clock.now();
    const outcomes: WriteOutcome[] = [];
    const recorded: SettingsRevisionEntity[] = [];
    let last = store === null ? 0 : await store.lastRevision();
    for (const write of writes) {
      let planned: PlannedWrite;
      try {
        const current = await this.callerIn(state, caller);
        this.requirePermission(current, write.permission);
        planned = await this.plan(state, current, write, members, now);
      } catch (error) {
        outcomes.push(refusalOf(error));
        if (store) break;
        continue;
      }
      store?.add(write.setting, planned.effects);
      for (const effect of planned.effects) {
        state.put(write.setting.entity, effect.key, effect.type === 'delete' ? null : effect.row);
      }
      const revisions = planned.changes.map((change) =>
        revisionOf(guildId, ++last, write, author, now, change),
      );
      recorded.push(...revisions);
      outcomes.push({ ok: true, data: planned.data, revisions: store ? revisions : [] });
    }
    if (store && outcomes.every((outcome) => outcome.ok)) await store.finish(recorded);
    return outcomes;
  }

  /** Tells the event streams of a committed change (listeners run synchronously and must not throw). */
  private announce(guildId: string, revisions: readonly SettingsRevisionEntity[]): void {
    if (revisions.length === 0) return;
    this.events.emit(
      SettingsChangedEvent.event,
      new SettingsChangedEvent(guildId, revisions.map(summariseRevision)),
    );
  }

  /**
   * What the caller may do in the guild (`PermissionsService.may`, read through the guild's
   * settings cache): a test of one permission string, and a refusal (`.require`).
   */
  async may(guildId: string, author: SettingsAuthor): Promise<PermissionTest> {
    const cache = await this.cache.forGuild(guildId);
    return this.permissions.testFor(await this.caller(guildId, author.userId, cache, author.scope));
  }

  private caller(
    guildId: string,
    userId: string,
    cache: GuildSettingsCache,
    scope: readonly string[] | undefined,
  ): Promise<Caller> {
    return this.permissions.resolve(guildId, { userId, scope }, cache);
  }

  /** The caller's permission data as the change sees it (its own earlier writes applied). */
  private async callerIn(state: ChangeState, caller: Caller): Promise<Caller> {
    const { context, author, isMember } = caller;
    const guild = await this.permissions.guildIn(context, state);
    const current = isMember
      ? await this.permissions.memberIn(author.userId, author.roles, state)
      : author;
    return {
      context,
      guild,
      author: author.scope ? { ...current, scope: author.scope } : current,
      isMember,
    };
  }

  private requirePermission(caller: Caller, permission: string): void {
    this.permissions.require(caller, permission);
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
    return rows.map((row) => toApi(setting, row, 'client'));
  }

  /**
   * The platform members of the users the writes name (the targets a setting's rule may judge),
   * looked up before the guild's lock is taken: while it is held, only the database is waited
   * on. Distinct users are counted first: over MAX_NAMED_MEMBERS is refused before any lookup,
   * and each lookup the platform answers is charged to the caller's `member-lookup` budget.
   */
  private async membersNamedIn(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
  ): Promise<NamedMembers> {
    const userIds = new Set<string>();
    for (const { setting, fields } of writes) {
      const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
      for (const column of storedColumns(setting)) {
        const type = column.column_type;
        if (type.type === 'Widget' || type.inner.type !== 'String' || type.inner.kind !== 'user') {
          continue;
        }
        for (const row of rows) for (const id of valuesOf(row[column.id])) userIds.add(id);
      }
    }
    if (userIds.size > MAX_NAMED_MEMBERS) {
      const message = `This change names ${userIds.size} members; one request may name at most ${MAX_NAMED_MEMBERS} (each is looked up on the platform): split it into smaller changes`;
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'fields', message }]);
    }
    const ids = [...userIds];
    const charge = (): Promise<void> => this.charge(author.userId);
    const members = await mapConcurrent(ids, MEMBER_LOOKUPS_AT_ONCE, (id) =>
      this.guilds.memberOf(caller.context, id, charge),
    );
    return new Map(ids.map((id, i) => [id, members[i]]));
  }

  /** Counts one platform lookup against the user's `member-lookup` budget (429 when spent). */
  private async charge(userId: string): Promise<void> {
    if (!this.limiter.enabled) return;
    const state = await this.limiter.count('member-lookup', userId);
    if (state.blocked) throw this.limiter.refusal(state);
  }

  /**
   * What one write does, planned against the rows as the change sees them: the checks that need
   * the stored rows (existence, version, the setting's own rule), its answer, its effects and the
   * entries it changes. Nothing is written here.
   */
  private async plan(
    state: ChangeState,
    caller: Caller,
    write: CheckedWrite,
    members: NamedMembers,
    now: Date,
  ): Promise<PlannedWrite> {
    const { setting, operation, fields } = write;
    const items = operation === 'Reorder' ? (fields as SettingRow[]) : [fields as SettingRow];
    const current: ObjectLiteral[] = [];
    for (const item of items) {
      const row = await state.row(setting.entity, keyOf(setting, item));
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
    const before = current.map((row) => toApi(setting, row, 'all'));
    if (setting.authorize) {
      const check = await setting.authorize({
        operation,
        fields,
        current: before,
        guild: caller.guild,
        author: caller.author,
        memberOf: (userId) => this.targetOf(state, caller.context, userId, members),
      });
      if (!check.allowed) throw new AppException(ErrorCode.Restricted, denialMessage(check.denial));
    }
    const userId = caller.author.userId;
    const versioned = hasVersion(setting, state);
    const guildId = caller.context.guild.id;
    const changed = (row: ObjectLiteral, values: ObjectLiteral): Effect => ({
      type: 'update',
      key: keyOf(setting, toApi(setting, row, 'all')),
      row: {
        ...row,
        ...values,
        ...autoFilled(setting, userId, now, 'updated'),
        ...(versioned && { [VERSION_COLUMN]: (row[VERSION_COLUMN] as number) + 1 }),
      },
    });
    let effects: Effect[];
    let data: unknown;
    switch (operation) {
      case 'Create': {
        const row: ObjectLiteral = {
          ...toEntity(setting, items[0]),
          guild_id: guildId,
          ...autoFilled(setting, userId, now, 'created'),
          ...(versioned && { [VERSION_COLUMN]: 1 }),
        };
        effects = [{ type: 'insert', key: keyOf(setting, items[0]), row }];
        data = toApi(setting, row, 'client');
        break;
      }
      case 'Update': {
        // The version is checked above and raised here; a client's value never lands.
        const values = toEntity(setting, items[0]);
        delete values[VERSION_COLUMN];
        effects = [changed(current[0], values)];
        data = toApi(setting, effects[0].type === 'update' ? effects[0].row : {}, 'client');
        break;
      }
      case 'Delete':
        effects = [{ type: 'delete', key: keyOf(setting, toApi(setting, current[0], 'all')) }];
        data = keyOf(setting, items[0]);
        break;
      case 'Reorder': {
        const indexBy = setting.schema.index_by as string;
        effects = current.map((row, i) => changed(row, { [indexBy]: items[i][indexBy] }));
        data = effects.map((effect) =>
          toApi(setting, effect.type === 'update' ? effect.row : {}, 'client'),
        );
        break;
      }
    }
    const changes: EntryChange[] = effects.map((effect, i) => ({
      key: effect.key,
      before: operation === 'Create' ? null : before[i],
      after: effect.type === 'delete' ? null : toApi(setting, effect.row, 'all'),
    }));
    return { data, changes, effects };
  }

  /** A member a setting's rule judges: their platform roles and their overrides as the change sees them. */
  private async targetOf(
    state: ChangeState,
    context: GuildContext,
    userId: string,
    members: NamedMembers,
  ): Promise<PermissionMember> {
    // A user the fields do not name is looked up now (no built-in rule asks for one).
    const member = members.has(userId)
      ? (members.get(userId) ?? null)
      : await this.guilds.memberOf(context, userId);
    return this.permissions.memberIn(userId, member?.member.roles ?? [], state);
  }
}

/** A checked write; a key the service chooses (a Create's generated id) is chosen here, once. */
function writeOf(
  checked: Omit<CheckedWrite, 'reverts'>,
  reverts: number | null | undefined,
): CheckedWrite {
  if (checked.operation === 'Create') generateKeys(checked.setting, checked.fields as SettingRow);
  return { ...checked, reverts: reverts ?? null };
}

/** Refuses a change writing more than MAX_CHANGE_ENTRIES entries, before anything is looked up. */
function requireBounded(writes: readonly CheckedWrite[]): void {
  const entries = writes.reduce(
    (n, { fields }) => n + (Array.isArray(fields) ? fields.length : 1),
    0,
  );
  if (entries <= MAX_CHANGE_ENTRIES) return;
  const message = `This change writes ${entries} entries; one change writes at most ${MAX_CHANGE_ENTRIES}: split it into smaller changes`;
  throw new AppException(ErrorCode.BadRequest, message, [{ field: 'fields', message }]);
}

/** The entry keys each entity's writes touch, read before the first write is planned. */
function keysByEntity(
  writes: readonly CheckedWrite[],
): Map<RegisteredSetting['entity'], Record<string, unknown>[]> {
  const keys = new Map<RegisteredSetting['entity'], Record<string, unknown>[]>();
  for (const { setting, operation, fields } of writes) {
    const items = operation === 'Reorder' ? (fields as SettingRow[]) : [fields as SettingRow];
    const list = keys.get(setting.entity) ?? [];
    for (const item of items) list.push(keyOf(setting, item));
    keys.set(setting.entity, list);
  }
  return keys;
}

function hasVersion(setting: RegisteredSetting, state: ChangeState): boolean {
  return state.versionColumnOf(setting.entity) === VERSION_COLUMN;
}

/**
 * The effects of an applied change, held back and written in order when the change ends (or
 * before it reads the database again): consecutive inserts into one table go in one statement.
 */
class EffectWriter {
  private readonly pending: { setting: RegisteredSetting; effect: Effect }[] = [];

  constructor(
    private readonly manager: EntityManager,
    private readonly guildId: string,
  ) {}

  add(setting: RegisteredSetting, effects: readonly Effect[]): void {
    for (const effect of effects) this.pending.push({ setting, effect });
  }

  /** The guild's last revision number. */
  async lastRevision(): Promise<number> {
    const repository = this.manager.getRepository<ObjectLiteral>(SettingsRevisionEntity);
    return (await repository.maximum('revision', { guild_id: this.guildId })) ?? 0;
  }

  /** Writes what is held back, then the change's revisions. */
  async finish(revisions: readonly SettingsRevisionEntity[]): Promise<void> {
    await this.flush();
    const repository = this.manager.getRepository<ObjectLiteral>(SettingsRevisionEntity);
    for (let i = 0; i < revisions.length; i += ROWS_PER_INSERT) {
      await repository.insert(revisions.slice(i, i + ROWS_PER_INSERT));
    }
  }

  /**
   * Writes what is held back, in order: consecutive effects of one kind on one table, each entry
   * once, go in one statement (an insert, an upsert of the whole rows, a delete).
   */
  async flush(): Promise<void> {
    const pending = this.pending.splice(0);
    for (let i = 0; i < pending.length;) {
      const { setting, effect } = pending[i];
      const group: Effect[] = [];
      const keys = new Set<string>();
      for (
        ;
        i < pending.length &&
        pending[i].setting === setting &&
        pending[i].effect.type === effect.type &&
        !keys.has(stableJson(pending[i].effect.key)) &&
        group.length < ROWS_PER_INSERT;
        i++
      ) {
        keys.add(stableJson(pending[i].effect.key));
        group.push(pending[i].effect);
      }
      await this.write(setting, group);
    }
  }

  /** One statement for effects of one kind on one table, on distinct entries. */
  private async write(setting: RegisteredSetting, effects: readonly Effect[]): Promise<void> {
    const repository = this.manager.getRepository<ObjectLiteral>(setting.entity);
    const rows = effects.flatMap((effect) => (effect.type === 'delete' ? [] : [{ ...effect.row }]));
    switch (effects[0].type) {
      case 'insert':
        await insertNew(repository, rows, () => alreadyExists(setting, effects[0].key));
        break;
      case 'update': {
        // The rows exist (read for update under the guild's lock): the whole row is written,
        // its version raised by the plan.
        const conflictPaths = repository.metadata.primaryColumns.map(
          (column) => column.propertyName,
        );
        await repository.upsert(rows, { conflictPaths, skipUpdateIfNoValuesChanged: false });
        break;
      }
      case 'delete':
        await repository
          .createQueryBuilder()
          .delete()
          .where(effects.map((effect) => ({ ...effect.key, guild_id: this.guildId })))
          .execute();
        break;
    }
  }
}

/**
 * Inserts new rows, never `save` (which would turn a row created meanwhile into an update); a
 * unique violation (a writer that does not take the guild's lock inserted a key first) is the
 * plan's answer for an existing key.
 */
async function insertNew(
  repository: Repository<ObjectLiteral>,
  rows: ObjectLiteral[],
  exists: () => AppException,
): Promise<void> {
  try {
    await repository.insert(rows);
  } catch (error) {
    throw isUniqueViolation(error) ? exists() : error;
  }
}

/** The revision recording one entry's change. */
function revisionOf(
  guildId: string,
  revision: number,
  write: CheckedWrite,
  author: SettingsAuthor,
  now: Date,
  change: EntryChange,
): SettingsRevisionEntity {
  return Object.assign(new SettingsRevisionEntity(), {
    guild_id: guildId,
    revision,
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
  });
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
