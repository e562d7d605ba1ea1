import { randomUUID } from 'node:crypto';
import { IsNull, type ObjectLiteral } from 'typeorm';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';
import {
  isStored,
  primaryKeyOf,
  VERSION_COLUMN,
  type ColumnSchema,
  type ExecutableOperation,
} from 'src/settings/schema/settings-schema';

/**
 * The settings engine's pure row handling: API rows to entities and back, keys, filters, the
 * columns the engine fills in, and cache keys. No database, no Nest.
 */

const AUTO_COLUMNS = ['created_at', 'created_by', 'last_updated_at', 'last_updated_by'] as const;

/**
 * JSON with object keys sorted, so equal queries give equal cache keys. Sorted by code unit, not
 * by locale: the order only has to be the same every time, and a locale comparison runs the
 * collation on every key of every read.
 */
export function stableJson(value: unknown): string {
  return isFlatAndSorted(value) ? JSON.stringify(value) : JSON.stringify(value, withSortedKeys);
}

function withSortedKeys(_key: string, value: unknown): unknown {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;
}

/**
 * A primitive, or a plain object of primitives whose keys already come in order: most queries
 * are, and JSON.stringify alone gives them the same text without a replacer call per value.
 */
function isFlatAndSorted(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  let previous = '';
  for (const [key, field] of Object.entries(value)) {
    if (key < previous || (field !== null && typeof field === 'object')) return false;
    previous = key;
  }
  return true;
}

export function offers(setting: RegisteredSetting, operation: ExecutableOperation): boolean {
  return operation === 'Reorder'
    ? setting.schema.index_by !== null
    : setting.schema.operations.includes(operation);
}

export function storedColumns(setting: RegisteredSetting): ColumnSchema[] {
  return setting.schema.columns.filter(isStored);
}

export function isTimestamp(column: ColumnSchema): boolean {
  const type = column.column_type;
  return type.type === 'Scalar' && type.inner.type === 'String' && type.inner.kind === 'timestamp';
}

/** API values → entity values (timestamps become dates). */
export function toEntity(setting: RegisteredSetting, values: SettingRow): ObjectLiteral {
  const entity: ObjectLiteral = {};
  for (const column of storedColumns(setting)) {
    if (!(column.id in values)) continue;
    const value = values[column.id];
    entity[column.id] = isTimestamp(column) && typeof value === 'string' ? new Date(value) : value;
  }
  return entity;
}

/** View filters as a `where`: null matches an empty value (TypeORM refuses a bare null). */
export function viewFilters(setting: RegisteredSetting, filters: SettingRow): ObjectLiteral {
  return Object.fromEntries(
    Object.entries(toEntity(setting, filters)).map(([id, value]) => [
      id,
      value === null ? IsNull() : value,
    ]),
  );
}

/**
 * Which columns a row shows: `client`, as a View answers it (columns hidden on View left out);
 * `all`, every stored column (for checks, revisions and rollbacks).
 */
export type RowColumns = 'client' | 'all';

/** Entity → API row (dates as ISO 8601), with the columns `columns` names. */
export function toApi(
  setting: RegisteredSetting,
  entity: ObjectLiteral,
  columns: RowColumns,
): SettingRow {
  const row: SettingRow = {};
  for (const column of storedColumns(setting)) {
    if (columns === 'client' && column.hidden.includes('View')) continue;
    const value: unknown = entity[column.id];
    row[column.id] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return row;
}

export function keyOf(setting: RegisteredSetting, values: SettingRow): Record<string, unknown> {
  return Object.fromEntries(
    primaryKeyOf(setting.schema).map((column) => [column.id, values[column.id]]),
  );
}

/**
 * `fields` naming the version `row` is at (where it has one), so the engine refuses the write if
 * the row moves on before it is applied.
 */
export function atVersionOf(fields: SettingRow, row: SettingRow): SettingRow {
  return VERSION_COLUMN in row ? { ...fields, [VERSION_COLUMN]: row[VERSION_COLUMN] } : fields;
}

export function describeKey(setting: RegisteredSetting, values: SettingRow): string {
  return Object.entries(keyOf(setting, values))
    .map(([id, value]) => `${id} ${String(value)}`)
    .join(', ');
}

/** A UUID primary key that clients cannot set on Create is generated. */
export function generateKeys(setting: RegisteredSetting, values: SettingRow): void {
  for (const column of primaryKeyOf(setting.schema)) {
    const type = column.column_type;
    const uuid =
      type.type === 'Scalar' && type.inner.type === 'String' && type.inner.kind === 'uuid';
    if (uuid && column.readonly.includes('Create')) values[column.id] = randomUUID();
  }
}

/** `created_*` on Create and `last_updated_*` always, for the columns the setting declares. */
export function autoFilled(
  setting: RegisteredSetting,
  userId: string,
  now: Date,
  change: 'created' | 'updated',
): ObjectLiteral {
  const declared = new Set(setting.schema.columns.map((column) => column.id));
  const values: Record<(typeof AUTO_COLUMNS)[number], unknown> = {
    created_at: now,
    created_by: userId,
    last_updated_at: now,
    last_updated_by: userId,
  };
  return Object.fromEntries(
    AUTO_COLUMNS.filter(
      (id) => declared.has(id) && (change === 'created' || id.startsWith('last_')),
    ).map((id) => [id, values[id]]),
  );
}

export function defaultOrder(setting: RegisteredSetting): Record<string, 'ASC' | 'DESC'> {
  const order: Record<string, 'ASC' | 'DESC'> = {};
  if (setting.schema.index_by) order[setting.schema.index_by] = 'ASC';
  for (const column of primaryKeyOf(setting.schema)) order[column.id] = 'ASC';
  return order;
}

export function valuesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
