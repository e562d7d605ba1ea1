import fc from 'fast-check';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { canonicalList } from 'src/permissions/permission-string';
import type {
  ColumnSchema,
  InnerColumnType,
  SettingSchema,
} from 'src/settings/schema/settings-schema';
import { databaseOf } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { CREATABLE_SETTINGS, publishedSettings } from 'test/support/declared-settings';
import { actor, CHANNEL, ok, ROLE, type Actor } from 'test/support/demo-world';

type Row = Record<string, unknown>;

/** Property runs per setting; a failure prints the seed and the shrunk `fields` to replay it. */
const RUNS = 40;
const MEMBERS = [DEMO_IDS.alice, DEMO_IDS.bob, DEMO_IDS.carol, DEMO_IDS.demoUser];
const PERMISSIONS = [
  'rpc.view',
  'rpc.kick',
  '~rpc.kick',
  'auditlog_sinks.view',
  'guildroles.*',
  'global.*',
  'test',
];
const FOREIGN_SNOWFLAKE = '1100000000000009999';

/** Values no column accepts as they are, mixed in to exercise the refusals. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    null,
    '',
    -1,
    1.5,
    2 ** 53,
    'x'.repeat(5_000),
    'nul\u0000',
    '١٢٣',
    "' OR 1=1 --",
    FOREIGN_SNOWFLAKE,
    '99999999999999999999',
    {},
    [],
  ),
);

/** A value the column's published type allows (references point at the guild's own ids). */
function validInner(inner: InnerColumnType): fc.Arbitrary<unknown> {
  switch (inner.type) {
    case 'String':
      if (inner.allowed_values?.length) return fc.constantFrom(...inner.allowed_values);
      switch (inner.kind) {
        case 'uuid':
          return fc.uuid({ version: 4 });
        case 'timestamp':
          return fc
            .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
            .map((date) => date.toISOString());
        case 'interval':
          return fc.nat({ max: 10 ** 9 }).map(String);
        case 'user':
          return fc.constantFrom(...MEMBERS);
        case 'role':
          return fc.constantFrom(...Object.values(ROLE));
        case 'channel':
          return fc.constantFrom(...Object.values(CHANNEL));
        case 'permission':
          return fc.constantFrom(...PERMISSIONS);
        default:
          return fc.string({
            minLength: inner.min_length ?? 0,
            maxLength: Math.min(inner.max_length ?? 40, 40),
            unit: 'grapheme',
          });
      }
    case 'Integer':
      return fc.integer({ min: inner.min ?? -1_000_000, max: inner.max ?? 1_000_000 });
    case 'Float':
      return fc.double({ min: inner.min ?? -1e6, max: inner.max ?? 1e6, noNaN: true });
    case 'Boolean':
      return fc.boolean();
    case 'BitFlag':
      return fc
        .subarray(Object.values(inner.values))
        .map((bits) => bits.reduce((sum, bit) => sum + bit, 0));
    case 'Json':
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validValue(column: ColumnSchema): fc.Arbitrary<unknown> {
  const { column_type: type } = column;
  if (type.type === 'Widget') throw new Error(`${column.id} is a widget`);
  const value =
    type.type === 'Array'
      ? fc.array(validInner(type.inner), { maxLength: 5 })
      : validInner(type.inner);
  return column.nullable ? fc.option(value, { nil: null, freq: 5 }) : value;
}

/** The `fields` of a Create: each settable column valid, junk, or left out, plus sometimes an unknown key. */
function createFields(schema: SettingSchema): fc.Arbitrary<Row> {
  const settable = settableColumns(schema);
  const entries = settable.map((column) =>
    fc.oneof(
      { weight: 8, arbitrary: validValue(column).map((value) => [column.id, value] as const) },
      { weight: 1, arbitrary: junk.map((value) => [column.id, value] as const) },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
  );
  const extra = fc.oneof(
    { weight: 18, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(['unknown', 1] as const) },
    { weight: 1, arbitrary: fc.constant(['__proto__', {}] as const) },
  );
  return fc.tuple(fc.tuple(...entries), extra).map(([pairs, extraPair]) => {
    const fields: Row = JSON.parse('{}') as Row;
    for (const pair of pairs) if (pair) fields[pair[0]] = pair[1];
    // Defined as own properties so that `__proto__` is sent as a key, as a hostile client could.
    if (extraPair)
      Object.defineProperty(fields, extraPair[0], { value: extraPair[1], enumerable: true });
    return fields;
  });
}

function settableColumns(schema: SettingSchema): ColumnSchema[] {
  return schema.columns.filter(
    (column) => column.column_type.type !== 'Widget' && !column.readonly.includes('Create'),
  );
}

/** What the server stores for a sent value: permission lists in canonical form, the rest as sent. */
function storedForm(column: ColumnSchema, value: unknown): unknown {
  const type = column.column_type;
  if (type.type === 'Array' && type.inner.type === 'String' && type.inner.kind === 'permission') {
    return canonicalList(value as string[]);
  }
  return value;
}

describe('robustness: generated settings fields (fast-check)', () => {
  // The demo bot reports its shard every quarter of BOT_FEED_STALE_AFTER (30 s by default), a
  // write of its own that the snapshots would see: at most every 15 minutes here.
  const t = useTestApp({ env: { BOT_FEED_STALE_AFTER: '3600' } });
  let owner: Actor;
  let schemas: SettingSchema[];

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    schemas = await publishedSettings(t(), owner.token);
  });

  it('covers every built-in setting that offers Create', () => {
    const creatable = schemas.filter((s) => s.operations.includes('Create')).map((s) => s.id);
    expect(creatable.sort()).toEqual([...CREATABLE_SETTINGS].sort());
  });

  it.each(CREATABLE_SETTINGS)(
    '%s: accepted fields are stored and read back exactly; refused fields leave nothing behind',
    async (settingId) => {
      const schema = schemas.find((s) => s.id === settingId)!;
      const keyColumns = schema.columns.filter((column) => column.primary_key);
      let accepted = 0;
      let refused = 0;

      await fc.assert(
        fc.asyncProperty(createFields(schema), async (fields) => {
          const before = await snapshot(t());
          const res = await owner.exec(settingId, 'Create', fields);
          if (res.status !== 200) {
            refused += 1;
            expect({ status: res.status, code: res.body.code as unknown }).toEqual({
              status: expect.any(Number),
              code: expect.stringMatching(/^(BadRequest|Restricted|NotFound)$/),
            });
            expect(res.status).toBeLessThan(500);
            expect(await snapshot(t())).toEqual(before);
            return;
          }
          accepted += 1;
          const created = ok(res) as Row;
          for (const column of settableColumns(schema)) {
            if (column.id in fields) {
              expect(created[column.id]).toEqual(storedForm(column, fields[column.id]));
            }
          }
          const key = Object.fromEntries(
            keyColumns.map((column) => [column.id, created[column.id]]),
          );
          expect(ok(await owner.exec(settingId, 'View', key))).toEqual([created]);
          // Removed again, so that the next run can create the same key.
          expect(ok(await owner.exec(settingId, 'Delete', key))).toEqual(key);
        }),
        { numRuns: RUNS },
      );
      // Both branches of the property were exercised.
      expect(accepted).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    },
  );
});

/** Every setting table and the audit log, so that a refused request provably wrote nothing. */
async function snapshot(t: TestApp): Promise<Record<string, string[]>> {
  const database = databaseOf(t);
  const result: Record<string, string[]> = {};
  for (const metadata of database.entityMetadatas) {
    if (['users', 'sessions'].includes(metadata.tableName)) continue;
    const rows = await database.query<Row[]>(`SELECT * FROM "${metadata.tableName}"`);
    result[metadata.tableName] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return result;
}
