import {
  DEFAULT_MAX_STRING_LENGTH,
  isStored,
  type ColumnSchema,
  type InnerColumnType,
  type SettingSchema,
  type StringKind,
} from 'src/settings/schema/settings-schema';

/** One column of a setting's entity as the database stores it (from the TypeORM metadata). */
export interface StoredColumn {
  property: string;
  /** PostgreSQL's type name as TypeORM normalises it (`integer`, `character varying`, …). */
  type: string;
  length: number | null;
  precision: number | null;
  scale: number | null;
  nullable: boolean;
  /** The database fills it when a row is written without it (a default, or generated). */
  hasDefault: boolean;
  /** TypeORM's row version (`@VersionColumn`), raised on every save. */
  isVersion: boolean;
}

/** The widest range of a number column: what JavaScript numbers hold exactly. */
export const SAFE_RANGE = { min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

const INTEGER_RANGES: Readonly<Record<string, { min: number; max: number }>> = {
  smallint: { min: -(2 ** 15), max: 2 ** 15 - 1 },
  integer: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  int: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  int4: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  bigint: SAFE_RANGE,
};
const FLOAT_TYPES = ['double precision'];
const NUMERIC_TYPES = ['numeric'];
const STRING_TYPES = ['character varying', 'text'];
const TIMESTAMP_TYPES = ['timestamp with time zone', 'timestamp without time zone'];
const JSON_TYPES = ['jsonb', 'json'];

/** The longest value a String kind's own form allows (snowflakes, UUIDs, …). */
const KIND_MAX_LENGTH: Partial<Record<StringKind, number>> = {
  user: 20,
  role: 20,
  channel: 20,
  interval: 10,
  uuid: 36,
  permission: 129,
};

/** The column every setting's rows carry without declaring it: the engine scopes rows with it. */
const ENGINE_COLUMN = 'guild_id';

/**
 * Where a setting's declared columns and the entity that stores them disagree, so that a value
 * the validator accepts could still be refused by PostgreSQL (a 500), or Create could not write a
 * row at all: a declared column the entity lacks, an entity column the setting does not declare
 * and the database cannot fill, a null into NOT NULL, numbers beyond the column type, strings
 * longer than `varchar(n)`, a type that cannot hold the value. Each problem names the setting and
 * the entity; the engine refuses to boot with any.
 */
export function storageProblems(
  schema: SettingSchema,
  entity: string,
  stored: readonly StoredColumn[],
): string[] {
  const byProperty = new Map(stored.map((column) => [column.property, column]));
  const problems: string[] = [];
  const origin = `${schema.id} (entity ${entity})`;
  if (!byProperty.has(ENGINE_COLUMN)) {
    problems.push(`${origin}: the entity has no guild_id column to scope rows by guild`);
  }
  const declared = new Set(schema.columns.filter(isStored).map((column) => column.id));
  if (schema.operations.includes('Create')) {
    for (const column of stored) {
      if (column.property === ENGINE_COLUMN || declared.has(column.property)) continue;
      if (column.nullable || column.hasDefault) continue;
      problems.push(
        `${origin}: the entity's column "${column.property}" is NOT NULL without a default, and the setting does not declare it: no row could be written`,
      );
    }
  }
  for (const column of schema.columns.filter(isStored)) {
    const target = byProperty.get(column.id);
    const say = (problem: string): void =>
      void problems.push(`${origin}: column "${column.id}": ${problem}`);
    if (!target) {
      say('the entity has no such column');
      continue;
    }
    if (column.nullable && !target.nullable) say('declared nullable, but NOT NULL in the entity');
    for (const problem of typeProblems(column, target)) say(problem);
  }
  return problems;
}

function typeProblems(column: ColumnSchema, target: StoredColumn): string[] {
  const type = column.column_type;
  if (type.type === 'Widget') return [];
  const stored = describe(target);
  if (type.type === 'Array' || type.inner.type === 'Json') {
    return JSON_TYPES.includes(target.type)
      ? []
      : [`${type.type} values need jsonb, not ${stored}`];
  }
  const inner = type.inner;
  switch (inner.type) {
    case 'String':
      return stringProblems(inner, target);
    case 'Boolean':
      return target.type === 'boolean' ? [] : [`Boolean values need boolean, not ${stored}`];
    case 'Integer':
    case 'Float':
    case 'BitFlag': {
      const range = numberRange(inner, target);
      if (!range) return [`${inner.type} values cannot be stored in ${stored}`];
      const { min, max } =
        inner.type === 'BitFlag'
          ? { min: 0, max: Object.values(inner.values).reduce((sum, bit) => sum + bit, 0) }
          : inner;
      return (min !== undefined && min < range.min) || (max !== undefined && max > range.max)
        ? [`the bounds [${min}, ${max}] exceed ${stored} ([${range.min}, ${range.max}])`]
        : [];
    }
  }
}

function stringProblems(
  inner: InnerColumnType & { type: 'String' },
  target: StoredColumn,
): string[] {
  const stored = describe(target);
  if (inner.kind === 'timestamp') {
    return TIMESTAMP_TYPES.includes(target.type)
      ? []
      : [`timestamps need timestamptz, not ${stored}`];
  }
  if (target.type === 'uuid')
    return inner.kind === 'uuid' ? [] : [`only uuid values fit ${stored}`];
  if (!STRING_TYPES.includes(target.type)) return [`String values cannot be stored in ${stored}`];
  const longest = maxStringLength(inner);
  return target.length !== null && longest > target.length
    ? [`values may be ${longest} characters long, but ${stored} holds ${target.length}`]
    : [];
}

/** The longest string the validator accepts for this type. */
export function maxStringLength(inner: InnerColumnType & { type: 'String' }): number {
  const limits = [inner.max_length ?? DEFAULT_MAX_STRING_LENGTH, KIND_MAX_LENGTH[inner.kind]];
  if (inner.allowed_values?.length) {
    limits.push(Math.max(...inner.allowed_values.map((value) => [...value].length)));
  }
  return Math.min(...limits.filter((limit): limit is number => limit !== undefined));
}

/** The values a number column type holds exactly, or null when it cannot hold this type. */
export function numberRange(
  inner: InnerColumnType,
  target: StoredColumn,
): { min: number; max: number } | null {
  if (NUMERIC_TYPES.includes(target.type)) {
    if (target.precision === null) return SAFE_RANGE;
    const limit = 10 ** (target.precision - (target.scale ?? 0));
    return { min: Math.max(-limit + 1, SAFE_RANGE.min), max: Math.min(limit - 1, SAFE_RANGE.max) };
  }
  // Fractions need a floating-point column; `real` is refused, its range and precision are narrower.
  if (FLOAT_TYPES.includes(target.type)) return SAFE_RANGE;
  if (inner.type === 'Float') return null;
  return INTEGER_RANGES[target.type] ?? null;
}

function describe(target: StoredColumn): string {
  return target.length !== null ? `${target.type}(${target.length})` : target.type;
}
