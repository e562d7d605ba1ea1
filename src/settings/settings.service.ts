import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type ObjectLiteral, type Repository } from 'typeorm';
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
import { SettingsAuditEntity } from 'src/settings/settings-audit.entity';
import { SettingsCache, type GuildSettingsCache } from 'src/settings/settings-cache';
import { lockGuildSettings } from 'src/settings/settings-lock';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/settings-registry';
import { primaryKeyOf, type ExecutableOperation } from 'src/settings/schema/setting-schema';
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
 * live guild and the bot's permissions, then applies the change in one transaction with an audit
 * row, and answers `{type: "Ok", data}`.
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
  ) {}

  /** Every module's settings, for a guild the bot is in (membership not required). */
  async list(guildId: string): Promise<Record<string, { type: 'Ok'; data: unknown[] }>> {
    await this.guilds.guildContext(guildId);
    return this.registry.groups();
  }

  /**
   * Runs one operation and answers its JSON (`{"type":"Ok","data":…}`), encoded: a View answer
   * comes from the guild's cache that way, so repeated reads of a large setting are neither
   * serialised nor encoded again.
   */
  async execute(
    guildId: string,
    userId: string,
    request: { setting: string; operation: ExecutableOperation; fields: unknown },
    /** A scoped API token's permission strings: the caller's own are limited to them. */
    scope?: readonly string[],
  ): Promise<Buffer> {
    const setting = this.registry.get(request.setting);
    if (!setting) throw new AppException(ErrorCode.NotFound, `Unknown setting ${request.setting}`);
    const operation = request.operation;
    if (!offers(setting, operation)) {
      const message = `${setting.schema.id} does not offer ${operation}`;
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'operation', message }]);
    }
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.caller(guildId, userId, cache, scope);
    const permission = `${setting.schema.id}.${operation.toLowerCase()}`;
    // From the cache: refuses before validation, as DESIGN §7 orders it. A write is checked
    // again in its transaction, against the data as it is when the write is applied.
    this.requirePermission(caller, permission);
    const checked = setting.validator.check(operation, request.fields);
    if (!checked.ok) throw invalid(checked.details);
    const prepare = setting.prepare;
    if (prepare && operation !== 'View') {
      checked.fields = Array.isArray(checked.fields)
        ? (checked.fields as SettingRow[]).map(prepare)
        : prepare(checked.fields as SettingRow);
    }
    if (operation !== 'View' && operation !== 'Delete') {
      const problems = [
        ...referenceProblems(setting, caller.context, checked.fields),
        ...botProblems(setting, caller.context, checked.fields),
      ];
      if (problems.length > 0) throw invalid(problems);
    }
    if (operation === 'View') return this.view(setting, guildId, checked.fields, cache);
    // Platform lookups happen before the guild's lock is taken: while it is held, only the
    // database is waited on, so writers queued behind it do not hold connections for long.
    const members = await this.membersNamedIn(setting, caller.context, checked.fields);
    const data = await this.dataSource.transaction(async (manager) => {
      // One settings writer per guild at a time, taken first (so no deadlock), and the permission
      // data read after it: a concurrent demotion is either committed and seen here, or waits.
      await lockGuildSettings(manager, guildId);
      const locked = await this.lockedCaller(caller, manager);
      this.requirePermission(locked, permission);
      return this.change(manager, setting, locked, operation, checked.fields, members);
    });
    await this.cache.changed(guildId);
    return Buffer.from(JSON.stringify({ type: 'Ok', data }));
  }

  private async caller(
    guildId: string,
    userId: string,
    cache: GuildSettingsCache,
    scope: readonly string[] | undefined,
  ): Promise<Caller> {
    const context = await this.guilds.guildContext(guildId);
    const member = await this.guilds.memberOf(context, userId);
    const guild = await this.permissions.guild(context, cache);
    // A non-member holds no permission strings (the owner is always a member).
    const own = member
      ? await this.permissions.member(guildId, userId, member.member.roles, cache)
      : { userId, roles: [], overrides: [] };
    const author = scope ? { ...own, scope } : own;
    return { context, guild, author, isMember: member !== null };
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
    if (hasPerm(this.permissions.resolved(caller.guild, caller.author), permission)) return;
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
    return cache.getEncoded(`view:${setting.schema.id}:${stableJson(fields)}`, async () =>
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
    setting: RegisteredSetting,
    caller: Caller,
    operation: Exclude<ExecutableOperation, 'View'>,
    fields: unknown,
    members: ReadonlyMap<string, MemberAccess | null>,
  ): Promise<unknown> {
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
        const row = repository.merge(current[0], {
          ...toEntity(setting, items[0]),
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
    const audit = Object.assign(new SettingsAuditEntity(), {
      guild_id: guildId,
      setting: setting.schema.id,
      operation,
      user_id: caller.author.userId,
      before: operation === 'Create' ? null : operation === 'Reorder' ? before : before[0],
      after:
        operation === 'Delete'
          ? null
          : operation === 'Reorder'
            ? after.map((row) => toApi(setting, row, false))
            : toApi(setting, after[0], false),
      created_at: now,
    });
    await manager.save(audit);
    return data;
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

function alreadyExists(setting: RegisteredSetting, values: SettingRow): AppException {
  const message = `${setting.schema.id} already has an entry ${describeKey(setting, values)}; use Update`;
  const field = primaryKeyOf(setting.schema)[0]?.id ?? 'fields';
  return new AppException(ErrorCode.BadRequest, message, [{ field, message }]);
}
