import type { ErrorDetail } from 'src/common/errors/app.exception';
import { FieldsValidator } from 'src/settings/schema/fields-validator';
import { normalizeSchema } from 'src/settings/schema/normalize-schema';
import { catalogSchemaProblems, schemaProblems } from 'src/settings/schema/schema-checks';
import type { ColumnSchema, SettingSchema } from 'src/settings/schema/settings-schema';
import { bitCombinations, validationSchema } from 'src/settings/schema/validation-schema';

const column = (overrides: Partial<ColumnSchema> & Pick<ColumnSchema, 'id'>): ColumnSchema => ({
  name: overrides.id,
  description: `The ${overrides.id}`,
  placeholder: null,
  nullable: false,
  primary_key: false,
  hidden: [],
  readonly: [],
  column_type: { type: 'Scalar', inner: { type: 'String', kind: 'normal' } },
  ...overrides,
});

/** A setting that uses every column type. */
const EXAMPLE: SettingSchema = {
  id: 'example',
  name: 'Example',
  description: 'Every column type',
  icon: 'mdi:cog',
  index_by: 'position',
  operations: ['View', 'Create', 'Update', 'Delete'],
  title_template: '{{name}}',
  view_template: '{{name}} in {{channel}}',
  postsend_template: 'Saved {{name}}',
  footer: { end_text: 'Drag to reorder' },
  columns: [
    column({
      id: 'id',
      primary_key: true,
      readonly: ['Create', 'Update'],
      column_type: { type: 'Scalar', inner: { type: 'String', kind: 'uuid' } },
    }),
    column({
      id: 'name',
      column_type: {
        type: 'Scalar',
        inner: { type: 'String', kind: 'normal', min_length: 2, max_length: 10 },
      },
    }),
    column({
      id: 'channel',
      nullable: true,
      column_type: { type: 'Scalar', inner: { type: 'String', kind: 'channel' } },
    }),
    column({
      id: 'mode',
      column_type: {
        type: 'Scalar',
        inner: { type: 'String', kind: 'normal', allowed_values: ['strict', 'lenient'] },
      },
    }),
    column({
      id: 'events',
      column_type: {
        type: 'Array',
        inner: { type: 'String', kind: 'normal', allowed_values: ['ban', 'kick'] },
      },
    }),
    column({ id: 'position', column_type: { type: 'Scalar', inner: { type: 'Integer', min: 0 } } }),
    column({
      id: 'ratio',
      nullable: true,
      column_type: { type: 'Scalar', inner: { type: 'Float', min: 0, max: 1 } },
    }),
    column({ id: 'enabled', column_type: { type: 'Scalar', inner: { type: 'Boolean' } } }),
    column({
      id: 'checks',
      column_type: { type: 'Scalar', inner: { type: 'BitFlag', values: { A: 1, B: 2, C: 8 } } },
    }),
    column({
      id: 'extra',
      nullable: true,
      column_type: { type: 'Scalar', inner: { type: 'Json', style: 'json' } },
    }),
    column({
      id: 'created_at',
      readonly: ['Create', 'Update'],
      column_type: { type: 'Scalar', inner: { type: 'String', kind: 'timestamp' } },
    }),
    column({
      id: 'secret_note',
      nullable: true,
      hidden: ['View'],
      column_type: { type: 'Scalar', inner: { type: 'String', kind: 'textarea' } },
    }),
    column({
      id: 'about',
      column_type: { type: 'Widget', inner: { type: 'Info', message: 'What this does' } },
    }),
  ],
};

const VALID_CREATE = {
  name: 'alpha',
  channel: '1100000000000000124',
  mode: 'strict',
  events: ['ban'],
  position: 3,
  enabled: true,
  checks: 9,
};

describe('setting declarations', () => {
  it('accepts a consistent declaration', () => {
    expect(schemaProblems(EXAMPLE)).toEqual([]);
  });

  const broken = (change: Partial<SettingSchema>): string[] =>
    schemaProblems({ ...EXAMPLE, ...change });
  const withColumns = (...columns: ColumnSchema[]): string[] => broken({ columns, index_by: null });
  const pk = column({ id: 'id', primary_key: true });

  it.each([
    ['an unknown index_by', () => broken({ index_by: 'nope' }), 'index_by "nope" is not a column'],
    [
      'an index_by that is not an integer',
      () => broken({ index_by: 'name' }),
      'must be a Scalar Integer column',
    ],
    ['no primary key', () => withColumns(column({ id: 'a' })), 'no primary key column'],
    [
      'duplicate column ids',
      () => withColumns(pk, column({ id: 'a' }), column({ id: 'a' })),
      'column "a" is declared twice',
    ],
    [
      'a Widget as primary key',
      () =>
        withColumns(
          pk,
          column({
            id: 'w',
            primary_key: true,
            column_type: { type: 'Widget', inner: { type: 'Info', message: 'x' } },
          }),
        ),
      'a Widget cannot be a primary key',
    ],
    [
      'a nullable primary key',
      () => withColumns(column({ id: 'id', primary_key: true, nullable: true })),
      'a primary key column cannot be nullable',
    ],
    [
      'an Array primary key',
      () =>
        withColumns(
          column({
            id: 'id',
            primary_key: true,
            column_type: { type: 'Array', inner: { type: 'String', kind: 'normal' } },
          }),
        ),
      'a primary key column cannot be an Array',
    ],
    [
      'an unknown operation',
      () => broken({ operations: ['View', 'Patch' as never] }),
      '"Patch" is not an operation',
    ],
    ['no View', () => broken({ operations: ['Create'] }), 'every setting offers View'],
    [
      'a template naming a missing column',
      () => broken({ view_template: '{{nope}}' }),
      'view_template refers to "nope"',
    ],
    ['an uppercase id', () => broken({ id: 'Bad' }), 'the id must be lowercase'],
    [
      'an unknown String kind',
      () =>
        withColumns(
          pk,
          column({
            id: 'a',
            column_type: { type: 'Scalar', inner: { type: 'String', kind: 'email' as never } },
          }),
        ),
      '"email" is not a String kind',
    ],
    [
      'min_length above max_length',
      () =>
        withColumns(
          pk,
          column({
            id: 'a',
            column_type: {
              type: 'Scalar',
              inner: { type: 'String', kind: 'normal', min_length: 5, max_length: 2 },
            },
          }),
        ),
      'min_length exceeds max_length',
    ],
    [
      'a BitFlag value that is not one bit',
      () =>
        withColumns(
          pk,
          column({
            id: 'a',
            column_type: { type: 'Scalar', inner: { type: 'BitFlag', values: { A: 3 } } },
          }),
        ),
      '3 is not a single bit',
    ],
    [
      'a BitFlag with too many values',
      () =>
        withColumns(
          pk,
          column({
            id: 'a',
            column_type: {
              type: 'Scalar',
              inner: {
                type: 'BitFlag',
                values: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`F${i}`, 2 ** i])),
              },
            },
          }),
        ),
      'a BitFlag has at most 8 values',
    ],
    [
      'a default on the primary key',
      () => withColumns(column({ id: 'id', primary_key: true, default: 'x' })),
      'column "id": a primary key column has no default',
    ],
    [
      'a default on a column read-only on Create',
      () => withColumns(pk, column({ id: 'at', readonly: ['Create'], default: 'x' })),
      'column "at": a column read-only on Create has no default (the engine fills it in)',
    ],
    [
      'a default on a Widget',
      () =>
        withColumns(
          pk,
          column({
            id: 'w',
            default: 'x',
            column_type: { type: 'Widget', inner: { type: 'Info', message: 'x' } },
          }),
        ),
      'column "w": a Widget holds no value, so it has no default',
    ],
    [
      'hidden naming an unknown operation',
      () => withColumns(column({ id: 'id', primary_key: true, hidden: ['Show' as never] })),
      '"Show" is not an operation',
    ],
  ])('refuses %s', (_name, problems, expected) => {
    expect(problems().some((problem) => problem.includes(expected))).toBe(true);
  });

  it.each(['guild_id', 'limit', 'offset', 'constructor'])(
    'refuses a column named %s, which the engine reserves',
    (id) => {
      expect(withColumns(pk, column({ id }))).toContain(
        `example: column "${id}": the id is reserved by the settings engine`,
      );
    },
  );

  it('refuses two modules declaring one id', () => {
    expect(catalogSchemaProblems([EXAMPLE, EXAMPLE])).toContain('example: declared by two modules');
  });
});

describe('validation_template', () => {
  const document = validationSchema(EXAMPLE);
  const defs = document.$defs as Record<
    string,
    { required?: string[]; properties?: Record<string, unknown> }
  >;

  it('is a JSON Schema 2020-12 document with one definition per operation and Reorder', () => {
    expect(document.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(defs).sort()).toEqual(['Create', 'Delete', 'Reorder', 'Update', 'View']);
  });

  it('requires what each operation needs', () => {
    expect(defs.Create.required?.sort()).toEqual(
      ['name', 'mode', 'events', 'position', 'enabled', 'checks'].sort(),
    );
    expect(defs.Update.required).toEqual(['id']);
    expect(defs.Delete.required).toEqual(['id']);
    expect(Object.keys(defs.Delete.properties ?? {})).toEqual(['id']);
  });

  it('leaves columns hidden on View out of the View filters, and widgets out of everything', () => {
    expect(Object.keys(defs.View.properties ?? {})).not.toContain('secret_note');
    expect(Object.keys(defs.View.properties ?? {})).toContain('limit');
    for (const def of Object.values(defs)) {
      expect(Object.keys(def.properties ?? {})).not.toContain('about');
    }
  });

  it('lists every combination of a BitFlag', () => {
    expect(bitCombinations([1, 2, 8])).toEqual([0, 1, 2, 3, 8, 9, 10, 11]);
  });
});

describe('fields validation', () => {
  const validator = new FieldsValidator(EXAMPLE);
  const failures = (
    operation: 'View' | 'Create' | 'Update' | 'Delete' | 'Reorder',
    fields: unknown,
  ): ErrorDetail[] => {
    const result = validator.check(operation, fields);
    return result.ok ? [] : result.details;
  };

  it('accepts valid fields and drops read-only values', () => {
    const result = validator.check('Create', {
      ...VALID_CREATE,
      // An echoed row's key (read-only on Create): well-formed, so accepted, and ignored.
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      created_at: 'ignored',
    });
    expect(result).toEqual({ ok: true, fields: VALID_CREATE });
  });

  it.each([
    [
      'a missing required field',
      'Create',
      { ...VALID_CREATE, name: undefined },
      'name',
      'name is required for Create',
    ],
    [
      'an unknown field',
      'Create',
      { ...VALID_CREATE, color: 'red' },
      'color',
      'color is not a field of example',
    ],
    [
      'a wrong type',
      'Create',
      { ...VALID_CREATE, enabled: 'yes' },
      'enabled',
      'enabled must be boolean',
    ],
    [
      'null in a non-nullable column',
      'Create',
      { ...VALID_CREATE, name: null },
      'name',
      'name must be string',
    ],
    [
      'a string too short',
      'Create',
      { ...VALID_CREATE, name: 'a' },
      'name',
      'name must NOT have fewer than 2 characters',
    ],
    [
      'a string too long',
      'Create',
      { ...VALID_CREATE, name: 'x'.repeat(11) },
      'name',
      'name must NOT have more than 10 characters',
    ],
    [
      'a value outside allowed_values',
      'Create',
      { ...VALID_CREATE, mode: 'chaos' },
      'mode',
      'mode must be one of "strict", "lenient"',
    ],
    [
      'an array item outside allowed_values',
      'Create',
      { ...VALID_CREATE, events: ['ban', 'mute'] },
      'events.1',
      'events.1 must be one of "ban", "kick"',
    ],
    [
      'an array over 100 items',
      'Create',
      { ...VALID_CREATE, events: Array(101).fill('ban') },
      'events',
      'events must NOT have more than 100 items',
    ],
    [
      'a bit that is not a flag',
      'Create',
      { ...VALID_CREATE, checks: 4 },
      'checks',
      'checks may only combine the flags A (1), B (2), C (8)',
    ],
    [
      'a channel that is not a snowflake',
      'Create',
      { ...VALID_CREATE, channel: 'general' },
      'channel',
      'channel must be a channel id (a snowflake)',
    ],
    [
      'an integer below its minimum',
      'Create',
      { ...VALID_CREATE, position: -1 },
      'position',
      'position must be >= 0',
    ],
    [
      'a fraction in an integer column',
      'Create',
      { ...VALID_CREATE, position: 1.5 },
      'position',
      'position must be integer',
    ],
    [
      'a float above its maximum',
      'Create',
      { ...VALID_CREATE, ratio: 2 },
      'ratio',
      'ratio must be <= 1',
    ],
    [
      'Update without the primary key',
      'Update',
      { name: 'beta' },
      'id',
      'id is required for Update',
    ],
    ['a primary key that is not a UUID', 'Delete', { id: 'nope' }, 'id', 'id must be a UUID'],
    // A key is checked by its own type even where it is read-only: it names a row.
    ...[null, 'nope', {}, [], 42].map(
      (id) =>
        [
          `the read-only key ${JSON.stringify(id)} on Update`,
          'Update',
          { id },
          'id',
          typeof id === 'string' ? 'id must be a UUID' : 'id must be string',
        ] as const,
    ),
    [
      'a read-only key that is not a UUID on Create',
      'Create',
      { ...VALID_CREATE, id: 'nope' },
      'id',
      'id must be a UUID',
    ],
    [
      'Delete with other fields',
      'Delete',
      { id: '0f8fad5b-d9cb-469f-a165-70867728950e', name: 'x' },
      'name',
      'name cannot be sent with Delete',
    ],
    ['a View limit over 100', 'View', { limit: 101 }, 'limit', 'limit must be <= 100'],
    [
      'a View filter on a hidden column',
      'View',
      { secret_note: 'x' },
      'secret_note',
      'secret_note cannot be sent with View',
    ],
    ['fields that are not an object', 'Create', ['name'], 'fields', 'fields must be object'],
    [
      'Reorder without the index',
      'Reorder',
      [{ id: '0f8fad5b-d9cb-469f-a165-70867728950e' }],
      '0.position',
      '0.position is required for Reorder',
    ],
    ['an empty Reorder', 'Reorder', [], 'fields', 'fields must NOT have fewer than 1 items'],
  ] as const)('reports %s', (_name, operation, fields, field, message) => {
    expect(failures(operation, fields)).toContainEqual({ field, message });
  });

  it('reports every failure at once', () => {
    const details = failures('Create', { name: 'a', mode: 'chaos', enabled: 'no', surprise: 1 });
    expect(details.map((d) => d.field).sort()).toEqual(
      ['checks', 'enabled', 'events', 'mode', 'name', 'position', 'surprise'].sort(),
    );
  });

  it('accepts null in nullable columns', () => {
    expect(
      validator.check('Create', { ...VALID_CREATE, channel: null, ratio: null, extra: null }).ok,
    ).toBe(true);
  });

  it('accepts any JSON in a Json column', () => {
    expect(
      validator.check('Create', { ...VALID_CREATE, extra: { deep: [1, { a: null }] } }).ok,
    ).toBe(true);
  });
});

describe('column defaults', () => {
  const DEFAULTS: SettingSchema = {
    ...EXAMPLE,
    index_by: null,
    columns: [
      column({ id: 'role', primary_key: true }),
      column({
        id: 'delay',
        default: 0,
        column_type: { type: 'Scalar', inner: { type: 'Integer', min: 0, max: 3600 } },
      }),
      column({
        id: 'enabled',
        default: true,
        column_type: { type: 'Scalar', inner: { type: 'Boolean' } },
      }),
      column({
        id: 'tags',
        default: [],
        column_type: { type: 'Array', inner: { type: 'String', kind: 'normal' } },
      }),
      column({ id: 'note', nullable: true }),
    ],
    title_template: '{{role}}',
    view_template: '{{role}}',
    postsend_template: '',
  };
  const validator = new FieldsValidator(DEFAULTS);
  const defs = validationSchema(DEFAULTS).$defs as Record<
    string,
    { required: string[]; properties: Record<string, Record<string, unknown>> }
  >;

  it('makes a column optional on Create and publishes its default there only', () => {
    expect(schemaProblems(DEFAULTS)).toEqual([]);
    expect(defs.Create.required).toEqual(['role']);
    expect(defs.Create.properties.delay).toMatchObject({ minimum: 0, maximum: 3600, default: 0 });
    expect(defs.Update.properties.delay).not.toHaveProperty('default');
  });

  it.each([
    [
      'every defaulted field left out',
      { role: '1' },
      { role: '1', delay: 0, enabled: true, tags: [] },
    ],
    [
      'some given, the rest defaulted',
      { role: '1', delay: 60, tags: ['a'] },
      { role: '1', delay: 60, enabled: true, tags: ['a'] },
    ],
    [
      'every field given (false and null kept)',
      { role: '1', delay: 5, enabled: false, tags: [], note: null },
      { role: '1', delay: 5, enabled: false, tags: [], note: null },
    ],
  ])('Create with %s stores the defaults of what is missing', (_name, fields, stored) => {
    expect(validator.check('Create', fields)).toEqual({ ok: true, fields: stored });
  });

  it('leaves Update as sent: a field left out keeps its stored value', () => {
    expect(validator.check('Update', { role: '1' })).toEqual({ ok: true, fields: { role: '1' } });
  });

  it('gives each Create its own copy of a default', () => {
    const first = validator.check('Create', { role: '1' });
    const second = validator.check('Create', { role: '2' });
    expect(first.ok && second.ok).toBe(true);
    if (first.ok && second.ok) {
      expect((first.fields as { tags: unknown }).tags).not.toBe(
        (second.fields as { tags: unknown }).tags,
      );
    }
  });

  it.each([
    ['a default above its maximum', 3601, 'must be <= 3600'],
    ['a default of another type', '0', 'must be integer'],
  ])('refuses %s at boot', (_name, value, said) => {
    const broken = new FieldsValidator({
      ...DEFAULTS,
      columns: DEFAULTS.columns.map((c) => (c.id === 'delay' ? { ...c, default: value } : c)),
    });
    expect(broken.defaultProblems()).toEqual([
      `example: column "delay": the default ${JSON.stringify(value)} ${said}`,
    ]);
  });

  it('publishes default on every column: the declared value, else null', () => {
    const published = normalizeSchema(DEFAULTS).columns.map((c) => [c.id, c.default]);
    expect(published).toEqual([
      ['role', null],
      ['delay', 0],
      ['enabled', true],
      ['tags', []],
      ['note', null],
    ]);
  });

  it('takes a null default for none: the column stays required on Create', () => {
    const noDefault = {
      ...DEFAULTS,
      columns: DEFAULTS.columns.map((c) => (c.id === 'delay' ? { ...c, default: null } : c)),
    };
    expect(new FieldsValidator(noDefault).defaultProblems()).toEqual([]);
    expect((validationSchema(noDefault).$defs as typeof defs).Create.required).toEqual([
      'role',
      'delay',
    ]);
  });

  it('accepts every declared default of a consistent declaration', () => {
    expect(validator.defaultProblems()).toEqual([]);
  });
});
