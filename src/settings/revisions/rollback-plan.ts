import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import { atVersionOf, stableJson } from 'src/settings/engine/settings-rows';
import {
  isStored,
  VERSION_COLUMN,
  type ColumnSchema,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';

/** One operation that puts an entry back as it was, as its author would send it by hand. */
export interface RestoringOperation {
  operation: 'Create' | 'Update' | 'Delete';
  fields: SettingRow;
  /** The revision whose change this operation undoes. */
  reverts: number;
}

/** Why an entry cannot be put back. */
export interface RollbackRefusal {
  key: Record<string, unknown> | null;
  reason: string;
}

export type RollbackPlan =
  { ok: true; operations: RestoringOperation[] } | { ok: false; refusals: RollbackRefusal[] };

/**
 * A revision as a rollback reads it: only the `before` of an entry's first revision and the
 * `after` of its last are read.
 */
export type RollbackRevision = Pick<
  SettingsRevisionEntity,
  'revision' | 'key' | 'before' | 'after'
>;
type Revision = RollbackRevision;

/**
 * What undoing `revisions` of one setting takes (any number of revisions, oldest first): per entry,
 * the state before the first of them is restored, provided the entry is still as the last of them
 * left it (compared by version where the rows have one). An entry that needs no change is left
 * alone; one that cannot be put back is refused with the reason, and so is the whole plan.
 * `current` gives each entry as stored now (null: absent).
 */
export function rollbackPlan(
  schema: SettingSchema,
  revisions: readonly Revision[],
  current: (key: Record<string, unknown>) => SettingRow | null,
): RollbackPlan {
  const byEntry = new Map<string, Revision[]>();
  const refusals: RollbackRefusal[] = [];
  for (const revision of revisions) {
    if (revision.key === null) {
      refusals.push({
        key: null,
        reason: `revision ${revision.revision} was recorded before revisions named their entry, so it cannot be undone`,
      });
      continue;
    }
    const entry = stableJson(revision.key);
    byEntry.set(entry, [...(byEntry.get(entry) ?? []), revision]);
  }
  const operations: RestoringOperation[] = [];
  for (const entryRevisions of byEntry.values()) {
    const first = entryRevisions[0];
    const last = entryRevisions[entryRevisions.length - 1];
    const key = first.key as Record<string, unknown>;
    const now = current(key);
    if (!unchangedSince(now, last.after)) {
      refusals.push({
        key,
        reason: `the entry has changed since revision ${last.revision}${describeNow(now)}`,
      });
      continue;
    }
    const restoring = restoringOperation(schema, key, first.before, now, first.revision);
    if (restoring) operations.push(restoring);
  }
  return refusals.length > 0 ? { ok: false, refusals } : { ok: true, operations };
}

function describeNow(now: SettingRow | null): string {
  if (now === null) return ' (it no longer exists)';
  return VERSION_COLUMN in now ? ` (it is at version ${String(now[VERSION_COLUMN])})` : '';
}

/**
 * Whether the entry is exactly as a revision left it. The whole row is compared, not the version
 * alone: an entry deleted and created again starts over at version 1, and its creation time differs.
 */
function unchangedSince(now: SettingRow | null, after: SettingRow | null): boolean {
  if (now === null || after === null) return now === after;
  return stableJson(now) === stableJson(after);
}

function restoringOperation(
  schema: SettingSchema,
  key: Record<string, unknown>,
  target: SettingRow | null,
  now: SettingRow | null,
  reverts: number,
): RestoringOperation | null {
  const stored = schema.columns.filter(isStored);
  if (target === null) {
    if (now === null) return null;
    return { operation: 'Delete', fields: atVersionOf({ ...key }, now), reverts };
  }
  if (now === null) {
    return { operation: 'Create', fields: valuesFor(stored, target, 'Create', key), reverts };
  }
  const changed = valuesFor(stored, target, 'Update', key);
  const differs = Object.keys(changed).some(
    (column) => !(column in key) && stableJson(changed[column]) !== stableJson(now[column]),
  );
  if (!differs) return null;
  return { operation: 'Update', fields: atVersionOf(changed, now), reverts };
}

/** The key and the values of the columns the operation lets a client set, as `target` has them. */
function valuesFor(
  columns: readonly ColumnSchema[],
  target: SettingRow,
  operation: 'Create' | 'Update',
  key: Record<string, unknown>,
): SettingRow {
  const fields: SettingRow = { ...key };
  for (const column of columns) {
    if (column.primary_key || column.readonly.includes(operation)) continue;
    if (column.id in target) fields[column.id] = target[column.id];
  }
  return fields;
}
