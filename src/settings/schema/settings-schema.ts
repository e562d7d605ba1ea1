/**
 * A setting's schema as published (the spec's Setting and Column objects; docs/settings-engine.md).
 * Modules declare settings as data of these types; the engine derives validation and storage
 * access from them.
 */

export const OPERATIONS = ['View', 'Create', 'Update', 'Delete'] as const;
export type Operation = (typeof OPERATIONS)[number];
/** Reorder is implied by `index_by` rather than listed in `operations`. */
export type ExecutableOperation = Operation | 'Reorder';

export const STRING_KINDS = [
  'normal',
  'textarea',
  'uuid',
  'timestamp',
  'interval',
  'user',
  'role',
  'channel',
  'permission',
] as const;
export type StringKind = (typeof STRING_KINDS)[number];

export interface StringType {
  type: 'String';
  kind: StringKind;
  min_length?: number;
  max_length?: number;
  /** Empty: any value. */
  allowed_values?: string[];
  /** Offered by clients; any value is still accepted. */
  suggestions?: string[];
}

export interface NumberType {
  type: 'Integer' | 'Float';
  min?: number;
  max?: number;
}

export interface BooleanType {
  type: 'Boolean';
}

/** A bitfield; `values` names each bit (`{MENTIONS: 1, LINKS: 2}`). */
export interface BitFlagType {
  type: 'BitFlag';
  values: Record<string, number>;
}

export interface JsonType {
  type: 'Json';
  style: string;
}

export type InnerColumnType = StringType | NumberType | BooleanType | BitFlagType | JsonType;

export type WidgetType =
  | { type: 'Info' | 'Warning'; message: string }
  | { type: 'Button'; label: string; operation: Operation };

export type ColumnType =
  | { type: 'Scalar'; inner: InnerColumnType }
  | { type: 'Array'; inner: InnerColumnType }
  | { type: 'Widget'; inner: WidgetType };

export interface ColumnSchema {
  id: string;
  name: string;
  description: string;
  placeholder: string | null;
  nullable: boolean;
  primary_key: boolean;
  /** Operations for which clients hide the column (a column hidden on View is never returned). */
  hidden: Operation[];
  /** Operations for which the column cannot be set; a value sent anyway is ignored. */
  readonly: Operation[];
  column_type: ColumnType;
  /**
   * The value Create stores when `fields` leaves the column out, which makes it optional on
   * Create (checked at boot against the column's own type). Published on every column, null
   * where there is none (a nullable column left out is stored null anyway).
   */
  default?: unknown;
}

export interface SettingSchema {
  id: string;
  name: string;
  description: string;
  icon: string;
  /** An Integer column that orders the rows; enables the `Reorder` operation. */
  index_by: string | null;
  columns: ColumnSchema[];
  operations: Operation[];
  /** `{{column}}` templates rendered by clients (docs/settings.md, "Text templates"). */
  title_template: string;
  view_template: string;
  postsend_template: string;
  footer: { end_text: string } | null;
}

/** An array column holds at most this many items. */
export const MAX_ARRAY_ITEMS = 100;
/** A String column without `max_length` holds at most this many characters. */
export const DEFAULT_MAX_STRING_LENGTH = 4000;
/** BitFlag columns validate as the set of their combinations, so they stay small. */
export const MAX_BITFLAG_VALUES = 8;

/** The row version column the engine adds to every setting whose entity keeps one. */
export const VERSION_COLUMN = 'version';

/**
 * The row version as a column: it grows with every change to the row, and no client sets it (it is
 * read-only). Update and Delete accept the version the client read as a precondition, and refuse
 * the change (409 `VersionConflict`) if the row has moved on since.
 */
export function versionColumn(): ColumnSchema {
  return {
    id: VERSION_COLUMN,
    name: 'Version',
    description:
      'Grows with every change to the entry; send the version you read with Update or Delete to refuse the change if someone changed the entry since',
    placeholder: null,
    nullable: false,
    primary_key: false,
    hidden: ['Create'],
    readonly: ['Create', 'Update'],
    column_type: { type: 'Scalar', inner: { type: 'Integer', min: 1 } },
  };
}

/**
 * A value Update names the row by or checks it against, so validated and kept though it cannot be
 * changed: the primary key, and the row version.
 */
export function identifiesRow(column: ColumnSchema): boolean {
  return column.primary_key || column.id === VERSION_COLUMN;
}

/** Whether the column declares a default (null is none: see `ColumnSchema.default`). */
export function hasDefault(column: ColumnSchema): boolean {
  return column.default !== undefined && column.default !== null;
}

export function isStored(column: ColumnSchema): boolean {
  return column.column_type.type !== 'Widget';
}

export function primaryKeyOf(schema: SettingSchema): ColumnSchema[] {
  return schema.columns.filter((column) => column.primary_key);
}

/** The `{{column}}` placeholders of a template. */
export function templateColumns(template: string): string[] {
  return [...template.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)].map((match) => match[1]);
}
