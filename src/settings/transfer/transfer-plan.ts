import type { RowDiff } from 'src/settings/engine/settings-revision.entity';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import { diffRows } from 'src/settings/engine/revision-diff';
import { atVersionOf, stableJson } from 'src/settings/engine/settings-rows';
import {
  isStored,
  primaryKeyOf,
  VERSION_COLUMN,
  type ColumnSchema,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';

/** What an export document says it is; an import refuses anything else. */
export const EXPORT_FORMAT = 'bot-management-service/settings';
export const EXPORT_VERSION = 1;

/** Ids of the source guild → ids of the target guild, per kind. */
export interface IdMapping {
  roles?: Record<string, string>;
  channels?: Record<string, string>;
  users?: Record<string, string>;
}

const MAPPED_KINDS = { role: 'roles', channel: 'channels', user: 'users' } as const;
type MappedKind = keyof typeof MAPPED_KINDS;

/** The stored columns a client can set (on Create or Update), and the key: what an export holds. */
export function transferredColumns(schema: SettingSchema): ColumnSchema[] {
  return schema.columns.filter(
    (column) =>
      isStored(column) &&
      column.id !== VERSION_COLUMN &&
      (column.primary_key ||
        !column.readonly.includes('Create') ||
        !column.readonly.includes('Update')),
  );
}

/** The names a row uses that are no column of the setting. */
export function columnsNotIn(schema: SettingSchema, row: SettingRow): string[] {
  const columns = new Set(schema.columns.filter(isStored).map((column) => column.id));
  return Object.keys(row).filter((name) => !columns.has(name));
}

/** A row as an export holds it: its key and the values a client can set. */
export function exportedRow(schema: SettingSchema, row: SettingRow): SettingRow {
  return Object.fromEntries(
    transferredColumns(schema)
      .filter((column) => Object.hasOwn(row, column.id))
      .map((column) => [column.id, row[column.id]]),
  );
}

function kindOf(column: ColumnSchema): MappedKind | null {
  const type = column.column_type;
  if (type.type === 'Widget' || type.inner.type !== 'String') return null;
  const kind = type.inner.kind;
  return kind === 'role' || kind === 'channel' || kind === 'user' ? kind : null;
}

/** The row with every role, channel and user id the mapping names replaced by its target. */
export function mapIds(schema: SettingSchema, row: SettingRow, mapping: IdMapping): SettingRow {
  const mapped: SettingRow = { ...row };
  for (const column of schema.columns) {
    const kind = kindOf(column);
    if (!kind || !Object.hasOwn(row, column.id)) continue;
    const table = mapping[MAPPED_KINDS[kind]] ?? {};
    const value = row[column.id];
    // Own entries only: an id such as "constructor" or "__proto__" must not find Object.prototype.
    const map = (id: unknown): unknown =>
      typeof id === 'string' && Object.hasOwn(table, id) ? table[id] : id;
    mapped[column.id] = Array.isArray(value) ? value.map(map) : map(value);
  }
  return mapped;
}

/** The role and channel ids the rows refer to. */
export function referencedIds(
  schema: SettingSchema,
  rows: readonly SettingRow[],
): { roles: Set<string>; channels: Set<string> } {
  const ids = { roles: new Set<string>(), channels: new Set<string>() };
  for (const column of schema.columns) {
    const kind = kindOf(column);
    if (kind !== 'role' && kind !== 'channel') continue;
    for (const row of rows) {
      const value = row[column.id];
      for (const id of Array.isArray(value) ? value : [value]) {
        if (typeof id === 'string') ids[MAPPED_KINDS[kind]].add(id);
      }
    }
  }
  return ids;
}

/** What importing one setting's rows would do to its current rows. */
export interface SettingImportPlan {
  created: SettingRow[];
  updated: { key: Record<string, unknown>; fields: SettingRow; changes: RowDiff }[];
  deleted: { key: Record<string, unknown>; fields: SettingRow }[];
  unchanged: Record<string, unknown>[];
  /** Entries the plan itself cannot make (before any check of the engine's). */
  refused: { key: Record<string, unknown>; reason: string }[];
}

/**
 * The changes that make a setting's rows equal to `wanted` (the export's, ids already mapped),
 * matched by primary key: a row only wanted is created, one only present is deleted, one in both
 * that differs is updated at the version it has now (so a change made meanwhile is refused), and
 * the rest is unchanged. Only the columns an export holds are compared.
 */
export function importPlan(
  schema: SettingSchema,
  wanted: readonly SettingRow[],
  current: readonly SettingRow[],
): SettingImportPlan {
  const plan: SettingImportPlan = {
    created: [],
    updated: [],
    deleted: [],
    unchanged: [],
    refused: [],
  };
  const keyColumns = primaryKeyOf(schema).map((column) => column.id);
  const keyOf = (row: SettingRow): Record<string, unknown> =>
    Object.fromEntries(keyColumns.map((id) => [id, row[id]]));
  const present = new Map(current.map((row) => [stableJson(keyOf(row)), row]));
  const seen = new Set<string>();
  for (const row of wanted) {
    const key = keyOf(row);
    const id = stableJson(key);
    if (seen.has(id)) {
      plan.refused.push({ key, reason: 'the document lists this entry twice' });
      continue;
    }
    seen.add(id);
    const now = present.get(id);
    if (!now) {
      plan.created.push(row);
      continue;
    }
    const changes = diffRows(exportedRow(schema, now), exportedRow(schema, row));
    const fixed = Object.keys(changes).filter((column) => {
      const schemaColumn = schema.columns.find((c) => c.id === column);
      return schemaColumn !== undefined && schemaColumn.readonly.includes('Update');
    });
    if (fixed.length > 0) {
      plan.refused.push({
        key,
        reason: `${fixed.join(', ')} cannot be changed once the entry exists`,
      });
    } else if (Object.keys(changes).length === 0) {
      plan.unchanged.push(key);
    } else {
      const fields: SettingRow = { ...key };
      for (const column of Object.keys(changes)) fields[column] = row[column];
      plan.updated.push({ key, fields: atVersionOf(fields, now), changes });
    }
  }
  for (const [id, row] of present) {
    if (seen.has(id)) continue;
    const key = keyOf(row);
    plan.deleted.push({ key, fields: atVersionOf({ ...key }, row) });
  }
  return plan;
}
