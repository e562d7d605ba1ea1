import type { ObjectLiteral } from 'typeorm';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { PermissionMember } from 'src/settings/schema/settings-permissions';
import type { ChangeState } from 'src/settings/engine/change-state';
import type { Caller } from 'src/settings/engine/settings-callers';
import type { CheckedRequest } from 'src/settings/engine/settings-checks';
import type { SettingsAuthor } from 'src/settings/engine/settings-author';
import {
  autoFilled,
  describeKey,
  generateKeys,
  keyOf,
  toApi,
  toEntity,
} from 'src/settings/engine/settings-rows';
import { diffRows } from 'src/settings/engine/revision-diff';
import { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';
import {
  primaryKeyOf,
  VERSION_COLUMN,
  type ExecutableOperation,
} from 'src/settings/schema/settings-schema';

/**
 * The most entries one change writes (an import, a restore, several writes at once): measured by
 * `npm run bench:costs` at under 0.2 s on the embedded engine, whose one connection every other
 * request waits for meanwhile (docs/request-costs.md).
 */
export const MAX_CHANGE_ENTRIES = 500;

type WriteOperation = Exclude<ExecutableOperation, 'View'>;

/** A write that passed every check made outside the transaction. */
export interface CheckedWrite extends CheckedRequest {
  operation: WriteOperation;
  /** The revision this write undoes (a rollback), else null. */
  reverts: number | null;
}

/** What one write does to the stored rows, applied in order. */
export type Effect =
  | { type: 'insert'; key: Record<string, unknown>; row: ObjectLiteral }
  | { type: 'update'; key: Record<string, unknown>; row: ObjectLiteral }
  | { type: 'delete'; key: Record<string, unknown> };

/** One entry a change touched: its key, and its state before and after (null: absent). */
export interface EntryChange {
  key: Record<string, unknown>;
  before: SettingRow | null;
  after: SettingRow | null;
}

/** A write planned against the rows as the change sees them: its answer and its effects. */
export interface PlannedWrite {
  data: unknown;
  changes: EntryChange[];
  effects: Effect[];
}

/**
 * A checked request as a write (a View is refused: a change holds only writes); a key the service
 * chooses (a Create's generated id) is chosen here, once.
 */
export function writeOf(checked: CheckedRequest, reverts: number | null = null): CheckedWrite {
  const { operation } = checked;
  if (operation === 'View') {
    const message = 'View reads; a change holds only writes';
    throw new AppException(ErrorCode.BadRequest, message, [{ field: 'operation', message }]);
  }
  if (operation === 'Create') generateKeys(checked.setting, checked.fields as SettingRow);
  return { ...checked, operation, reverts };
}

/** Refuses a change writing more than MAX_CHANGE_ENTRIES entries, before anything is looked up. */
export function requireBounded(writes: readonly CheckedWrite[]): void {
  const entries = writes.reduce(
    (n, { fields }) => n + (Array.isArray(fields) ? fields.length : 1),
    0,
  );
  if (entries <= MAX_CHANGE_ENTRIES) return;
  const message = `This change writes ${entries} entries; one change writes at most ${MAX_CHANGE_ENTRIES}: split it into smaller changes`;
  throw new AppException(ErrorCode.BadRequest, message, [{ field: 'fields', message }]);
}

/** The entry keys each entity's writes touch, read before the first write is planned. */
export function keysByEntity(
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

/**
 * What one write does, planned against the rows as the change sees them: the checks that need
 * the stored rows (existence, version, the setting's own rule, judging members through
 * `memberOf`), its answer, its effects and the entries it changes. Nothing is written here.
 */
export async function planWrite(
  state: ChangeState,
  caller: Caller,
  write: CheckedWrite,
  memberOf: (userId: string) => Promise<PermissionMember>,
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
      memberOf,
    });
    if (!check.allowed) throw new AppException(ErrorCode.Restricted, check.message);
  }
  const userId = caller.author.userId;
  const versioned = state.versionColumnOf(setting.entity) === VERSION_COLUMN;
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

/** The revision recording one entry's change. */
export function revisionOf(
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
    session_id: author.id,
    session_type: author.type,
    reverts: write.reverts,
    created_at: now,
  });
}

/**
 * Update and Delete may name the version of the entry the client read: a row that has moved on
 * since is refused, so one admin's change never silently overwrites another's.
 */
function requireVersion(setting: RegisteredSetting, row: ObjectLiteral, item: SettingRow): void {
  const expected = item[VERSION_COLUMN] as number | undefined;
  if (expected === undefined || !(VERSION_COLUMN in row) || row[VERSION_COLUMN] === expected)
    return;
  const current = row[VERSION_COLUMN] as number;
  const entry = `${setting.schema.id} entry ${describeKey(setting, item)}`;
  // A version the entry never had was not read from it: say so, rather than "changed since".
  const message =
    expected > current
      ? `${entry} has no version ${expected}: it is at version ${current}; read it and send the version it has`
      : `${entry} has changed since you read it (it is at version ${current}, you sent ${expected}); read it again and retry`;
  throw new AppException(ErrorCode.VersionConflict, message, [{ field: VERSION_COLUMN, message }]);
}

/** A Create of a key that exists: 400, pointing to Update. */
export function alreadyExists(setting: RegisteredSetting, values: SettingRow): AppException {
  const message = `${setting.schema.id} already has an entry ${describeKey(setting, values)}; use Update`;
  const field = primaryKeyOf(setting.schema)[0]?.id ?? 'fields';
  return new AppException(ErrorCode.BadRequest, message, [{ field, message }]);
}
