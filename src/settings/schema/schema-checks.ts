import {
  MAX_BITFLAG_VALUES,
  OPERATIONS,
  STRING_KINDS,
  templateColumns,
  hasDefault,
  type ColumnSchema,
  type InnerColumnType,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';

const ID = /^[a-z][a-z0-9_]{0,63}$/;
/**
 * Column ids the engine uses itself: `guild_id` scopes every row to its guild, `version` is the
 * row version it adds, `limit` and `offset` page View, and `constructor` is a property of every
 * JavaScript object.
 */
export const RESERVED_COLUMN_IDS: readonly string[] = [
  'guild_id',
  'version',
  'limit',
  'offset',
  'constructor',
];

/**
 * Everything inconsistent in a setting declaration, each as "<setting>: <problem>"; the engine
 * refuses to boot with any.
 */
export function schemaProblems(schema: SettingSchema): string[] {
  const problems: string[] = [];
  const say = (problem: string): void => void problems.push(`${schema.id}: ${problem}`);
  if (!ID.test(schema.id)) say('the id must be lowercase letters, digits and "_"');
  const ids = new Set<string>();
  for (const column of schema.columns) {
    if (!ID.test(column.id))
      say(`column "${column.id}": the id must be lowercase letters, digits and "_"`);
    if (RESERVED_COLUMN_IDS.includes(column.id))
      say(`column "${column.id}": the id is reserved by the settings engine`);
    if (ids.has(column.id)) say(`column "${column.id}" is declared twice`);
    ids.add(column.id);
    for (const problem of columnProblems(column)) say(`column "${column.id}": ${problem}`);
  }
  const primaryKey = schema.columns.filter((column) => column.primary_key);
  if (primaryKey.length === 0) say('no primary key column');
  for (const operation of schema.operations) {
    if (!OPERATIONS.includes(operation)) say(`"${operation}" is not an operation`);
  }
  if (new Set(schema.operations).size !== schema.operations.length)
    say('an operation is listed twice');
  if (!schema.operations.includes('View')) say('every setting offers View');
  if (schema.index_by !== null) {
    const index = schema.columns.find((column) => column.id === schema.index_by);
    if (!index) say(`index_by "${schema.index_by}" is not a column`);
    else if (index.column_type.type !== 'Scalar' || index.column_type.inner.type !== 'Integer') {
      say(`index_by "${schema.index_by}" must be a Scalar Integer column`);
    } else if (index.nullable || index.primary_key) {
      say(`index_by "${schema.index_by}" must be a non-nullable column outside the primary key`);
    }
  }
  for (const [name, template] of [
    ['title_template', schema.title_template],
    ['view_template', schema.view_template],
    ['postsend_template', schema.postsend_template],
  ] as const) {
    for (const column of templateColumns(template)) {
      if (!ids.has(column)) say(`${name} refers to "${column}", which is not a column`);
    }
  }
  return problems;
}

function columnProblems(column: ColumnSchema): string[] {
  const problems: string[] = [];
  for (const list of [column.hidden, column.readonly]) {
    for (const operation of list) {
      if (!OPERATIONS.includes(operation)) problems.push(`"${operation}" is not an operation`);
    }
  }
  const type = column.column_type;
  if (hasDefault(column)) {
    // A key names the entry and a read-only value is the engine's: neither is the caller's to skip.
    if (type.type === 'Widget') problems.push('a Widget holds no value, so it has no default');
    else if (column.primary_key) problems.push('a primary key column has no default');
    else if (column.readonly.includes('Create'))
      problems.push('a column read-only on Create has no default (the engine fills it in)');
  }
  if (type.type === 'Widget') {
    if (column.primary_key) problems.push('a Widget cannot be a primary key');
    if (column.nullable) problems.push('a Widget holds no value, so it cannot be nullable');
    return problems;
  }
  if (column.primary_key) {
    if (column.nullable) problems.push('a primary key column cannot be nullable');
    if (type.type === 'Array') problems.push('a primary key column cannot be an Array');
    if (type.inner.type === 'Json' || type.inner.type === 'Float') {
      problems.push(`a ${type.inner.type} column cannot be a primary key`);
    }
  }
  return [...problems, ...innerProblems(type.inner)];
}

function innerProblems(inner: InnerColumnType): string[] {
  switch (inner.type) {
    case 'String': {
      const problems: string[] = [];
      if (!STRING_KINDS.includes(inner.kind)) problems.push(`"${inner.kind}" is not a String kind`);
      const { min_length: min, max_length: max } = inner;
      if (min !== undefined && (!Number.isInteger(min) || min < 0))
        problems.push('min_length must be a whole number');
      if (max !== undefined && (!Number.isInteger(max) || max < 1))
        problems.push('max_length must be at least 1');
      if (min !== undefined && max !== undefined && min > max)
        problems.push('min_length exceeds max_length');
      const allowed = inner.allowed_values ?? [];
      if (new Set(allowed).size !== allowed.length) problems.push('allowed_values repeat a value');
      return problems;
    }
    case 'Integer':
    case 'Float':
      return inner.min !== undefined && inner.max !== undefined && inner.min > inner.max
        ? ['min exceeds max']
        : [];
    case 'BitFlag': {
      const bits = Object.values(inner.values);
      const problems: string[] = [];
      if (bits.length === 0) problems.push('a BitFlag needs values');
      if (bits.length > MAX_BITFLAG_VALUES) {
        problems.push(`a BitFlag has at most ${MAX_BITFLAG_VALUES} values`);
      }
      for (const bit of bits) {
        if (!Number.isInteger(bit) || bit <= 0 || bit > 2 ** 30 || (bit & (bit - 1)) !== 0) {
          problems.push(`${bit} is not a single bit`);
        }
      }
      if (new Set(bits).size !== bits.length) problems.push('two BitFlag values share a bit');
      return problems;
    }
    default:
      return [];
  }
}

/** Checks a whole catalog: every schema, and ids unique across modules. */
export function catalogSchemaProblems(schemas: readonly SettingSchema[]): string[] {
  const problems = schemas.flatMap(schemaProblems);
  const seen = new Set<string>();
  for (const schema of schemas) {
    if (seen.has(schema.id)) problems.push(`${schema.id}: declared by two modules`);
    seen.add(schema.id);
  }
  return problems;
}
