import { SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import {
  DEFAULT_MAX_STRING_LENGTH,
  hasDefault,
  isStored,
  MAX_ARRAY_ITEMS,
  primaryKeyOf,
  type ColumnSchema,
  type ExecutableOperation,
  type InnerColumnType,
  type SettingSchema,
  type StringKind,
  identifiesRow,
  VERSION_COLUMN,
} from 'src/settings/schema/settings-schema';

/** A JSON Schema (2020-12) document; kept loose, it is data for ajv and for clients. */
export type JsonSchema = Record<string, unknown>;

/** View answers at most this many rows per request. */
export const MAX_VIEW_LIMIT = 100;

const SNOWFLAKE = SNOWFLAKE_PATTERN.source;
const KIND_KEYWORDS: Readonly<Record<StringKind, JsonSchema>> = {
  normal: {},
  textarea: {},
  uuid: { format: 'uuid' },
  timestamp: { format: 'date-time' },
  /** Whole seconds. */
  interval: { pattern: '^(0|[1-9][0-9]{0,9})$' },
  user: { pattern: SNOWFLAKE },
  role: { pattern: SNOWFLAKE },
  channel: { pattern: SNOWFLAKE },
  /** One permission string: optional `~`, no spaces. */
  permission: { pattern: '^~?[^\\s~][^\\s]{0,127}$' },
};

/**
 * The setting's `validation_template`: one `$defs` entry per operation (and `Reorder` with
 * `index_by`), each describing exactly the `fields` the server accepts. The server validates with
 * this same document.
 */
export function validationSchema(schema: SettingSchema): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  for (const operation of schema.operations) defs[operation] = operationSchema(schema, operation);
  if (schema.index_by !== null) defs.Reorder = reorderSchema(schema, schema.index_by);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `urn:bot-management-service:settings:${schema.id}`,
    title: `${schema.name}: fields of each operation`,
    $defs: defs,
  };
}

function operationSchema(schema: SettingSchema, operation: ExecutableOperation): JsonSchema {
  const stored = schema.columns.filter(isStored);
  const primaryKey = primaryKeyOf(schema).map((column) => column.id);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  switch (operation) {
    case 'View':
      // Filters match a column's value exactly: single values only.
      for (const column of stored) {
        if (!column.hidden.includes('View') && isFilterable(column)) {
          properties[column.id] = valueSchema(column);
        }
      }
      properties.limit = { type: 'integer', minimum: 1, maximum: MAX_VIEW_LIMIT };
      properties.offset = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
      break;
    case 'Delete':
      // The key, and the row version the client read (optional: without it, no version check).
      for (const column of stored.filter(identifiesRow))
        properties[column.id] = valueSchema(column);
      required.push(...primaryKey);
      break;
    default:
      for (const column of stored) {
        const writable = !column.readonly.includes(operation as 'Create' | 'Update');
        // Read-only values may be sent (clients echo whole rows); the server ignores them. A key
        // (and the version) always has its own type: on Update it names (checks) the row, on Create
        // an echoed one is a row's.
        properties[column.id] = writable || identifiesRow(column) ? valueSchema(column) : {};
        // A column with a default may be left out of Create, which then stores the default.
        const defaulted = operation === 'Create' && writable && hasDefault(column);
        if (defaulted)
          properties[column.id] = { ...properties[column.id], default: column.default };
        const needed =
          operation === 'Create'
            ? writable && !column.nullable && !hasDefault(column)
            : column.primary_key;
        if (needed) required.push(column.id);
      }
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

function isFilterable(column: ColumnSchema): boolean {
  const type = column.column_type;
  return type.type === 'Scalar' && type.inner.type !== 'Json';
}

function reorderSchema(schema: SettingSchema, indexBy: string): JsonSchema {
  // Each item: its key and new index, and optionally the version the client read.
  const columns = schema.columns.filter(
    (column) => isStored(column) && (identifiesRow(column) || column.id === indexBy),
  );
  return {
    type: 'array',
    minItems: 1,
    maxItems: MAX_ARRAY_ITEMS,
    items: {
      type: 'object',
      properties: Object.fromEntries(columns.map((column) => [column.id, valueSchema(column)])),
      required: columns.filter((column) => column.id !== VERSION_COLUMN).map((column) => column.id),
      additionalProperties: false,
    },
  };
}

/** The JSON Schema of one column's value (null allowed for nullable columns). */
export function valueSchema(column: ColumnSchema): JsonSchema {
  const type = column.column_type;
  if (type.type === 'Widget') return {};
  const single = innerSchema(type.inner);
  const value =
    type.type === 'Array' ? { type: 'array', maxItems: MAX_ARRAY_ITEMS, items: single } : single;
  return column.nullable ? withNull(value) : value;
}

function innerSchema(inner: InnerColumnType): JsonSchema {
  switch (inner.type) {
    case 'String':
      return {
        type: 'string',
        minLength: inner.min_length ?? 0,
        maxLength: inner.max_length ?? DEFAULT_MAX_STRING_LENGTH,
        ...KIND_KEYWORDS[inner.kind],
        ...(inner.allowed_values?.length ? { enum: inner.allowed_values } : {}),
      };
    case 'Integer':
    case 'Float':
      return {
        type: inner.type === 'Integer' ? 'integer' : 'number',
        minimum: inner.min ?? -Number.MAX_SAFE_INTEGER,
        maximum: inner.max ?? Number.MAX_SAFE_INTEGER,
      };
    case 'Boolean':
      return { type: 'boolean' };
    case 'BitFlag':
      return { type: 'integer', enum: bitCombinations(Object.values(inner.values)) };
    case 'Json':
      return {};
  }
}

/** Every value made of the given bits, 0 included, ascending. */
export function bitCombinations(bits: readonly number[]): number[] {
  let values = [0];
  for (const bit of bits) values = [...values, ...values.map((value) => value | bit)];
  return [...new Set(values)].sort((a, b) => a - b);
}

function withNull(schema: JsonSchema): JsonSchema {
  if (Object.keys(schema).length === 0) return schema;
  const type = schema.type as string;
  const nullable: JsonSchema = { ...schema, type: [type, 'null'] };
  if (Array.isArray(schema.enum)) nullable.enum = [...(schema.enum as unknown[]), null];
  return nullable;
}
