import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { canonicalList } from 'src/permissions/permission-string';
import type {
  ColumnSchema,
  ExecutableOperation,
  SettingSchema,
} from 'src/settings/schema/settings-schema';
import { databaseOf } from 'test/support/auth';
import { rawRequest } from 'test/support/raw-http';
import { sample } from 'test/support/sweep';
import { useTestApp, type TestApp } from 'test/support/test-app';
import {
  BUILTIN_SETTINGS,
  publishedSettings,
  settingTables,
  SETTING_SAMPLES,
} from 'test/support/declared-settings';
import { actor, GUILD, ok, type Actor } from 'test/support/demo-world';

type Row = Record<string, unknown>;

/**
 * The classes of value that once reached the database and answered 500, as raw JSON text (so
 * that `-0`, `1e400` and deep nesting go on the wire as written).
 */
const VALUE_CLASSES: Record<string, string[]> = {
  'junk of every JSON type': [
    'null',
    'true',
    'false',
    '0',
    '-1',
    '""',
    '"text"',
    '"not-a-uuid"',
    '[]',
    '{}',
    '[1]',
    '["text"]',
    '{"a":1}',
  ],
  'timestamps no instant matches': [
    '"2016-12-31T23:59:60Z"',
    '"2016-12-31T12:59:60-11:00"',
    '"2016-02-30T00:00:00Z"',
    '"2016-01-01T00:00:00+05"',
    '"10000-01-01T00:00:00Z"',
    '"+275760-09-13T00:00:00Z"',
    '"-271821-04-20T00:00:00Z"',
  ],
  'numbers beyond column types': [
    '32768',
    '2147483648',
    '-2147483649',
    '9007199254740993',
    '9223372036854775808',
    '-9223372036854775809',
    '1e308',
    '-1e308',
    '1e400',
    '-0',
    '1.5',
    '1e-400',
    '[2147483648]',
    '[1.5]',
  ],
  'strings holding NUL': ['"nul\\u0000"', '["nul\\u0000"]', '{"nul\\u0000":1}'],
  'strings holding lone surrogates': ['"a.\\ud800"', '"\\udc00"', '["a.\\ud800"]', '{"\\ud800":1}'],
  'forms of a value the JSON Schema formats allow but the columns refuse': [
    '"urn:uuid:123e4567-e89b-12d3-a456-426614174000"',
    '"18446744073709551616"',
    '"99999999999999999999"',
    '["99999999999999999999"]',
  ],
  'deep nesting': [
    `${'['.repeat(100)}${']'.repeat(100)}`,
    `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
  ],
};

/** A stored entry of each setting that offers Create: the row Update, Delete and Reorder name. */
/** An entry of every setting that offers Create: its declared sample (its Create example). */
function seedRows(schemas: SettingSchema[]): Record<string, Row> {
  return Object.fromEntries(
    schemas
      .filter((schema) => schema.operations.includes('Create'))
      .map((schema) => [schema.id, SETTING_SAMPLES[schema.id]?.create ?? {}]),
  );
}

/** The `fields` of an operation that the server accepts in form, with one column's value replaced. */
function fieldsText(
  schema: SettingSchema,
  operation: ExecutableOperation,
  stored: Row,
  column: ColumnSchema,
  value: string,
): string {
  const keyColumns = schema.columns.filter((c) => c.primary_key).map((c) => c.id);
  const pick = (ids: string[]): Row =>
    Object.fromEntries(ids.filter((id) => id in stored).map((id) => [id, stored[id]]));
  const base: Row =
    operation === 'View'
      ? {}
      : operation === 'Create'
        ? pick(schema.columns.filter((c) => !c.readonly.includes('Create')).map((c) => c.id))
        : operation === 'Reorder'
          ? pick([...keyColumns, schema.index_by!])
          : pick(keyColumns);
  const rest = JSON.stringify(
    Object.fromEntries(Object.entries(base).filter(([id]) => id !== column.id)),
  );
  const object = `{${JSON.stringify(column.id)}:${value}${rest === '{}' ? '' : `,${rest.slice(1, -1)}`}}`;
  return operation === 'Reorder' ? `[${object}]` : object;
}

/** What the server stores for a value it accepted: permission lists in canonical form. */
function storedForm(column: ColumnSchema, value: unknown): unknown {
  const type = column.column_type;
  if (type.type === 'Array' && type.inner.type === 'String' && type.inner.kind === 'permission') {
    return canonicalList(value as string[]);
  }
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * Every settings table, and the revision trail's length and newest number, in one query: a
 * refused request provably wrote nothing. Revisions are only ever appended, so their count and
 * newest number show a write without re-reading the whole (ever longer) trail on every request.
 */
async function snapshot(t: TestApp): Promise<string> {
  const tables = settingTables(t).filter((table) => table !== 'settings_revisions');
  const select = [
    ...tables.map(
      (table) => `(SELECT json_agg(t ORDER BY t::text) FROM "${table}" t) AS "${table}"`,
    ),
    `(SELECT json_build_array(count(*), max(revision)) FROM settings_revisions) AS revisions`,
  ].join(', ');
  const [row] = await databaseOf(t).query<Row[]>(`SELECT ${select}`);
  return JSON.stringify(row);
}

describe('robustness: every published column of every setting, in every operation, with values the database could refuse', () => {
  const t = useTestApp();
  let owner: Actor;
  let schemas: SettingSchema[];
  const seeded: Record<string, Row> = {};

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    schemas = await publishedSettings(t(), owner.token);
    for (const [setting, fields] of Object.entries(seedRows(schemas))) {
      seeded[setting] = ok(await owner.exec(setting, 'Create', fields)) as Row;
    }
  });

  it('has a stored entry for every setting that offers Create', () => {
    const creatable = schemas.filter((s) => s.operations.includes('Create')).map((s) => s.id);
    expect(Object.keys(seeded).sort()).toEqual(creatable.sort());
  });

  it('covers every built-in setting', () => {
    expect(schemas.map((s) => s.id).sort()).toEqual(BUILTIN_SETTINGS);
  });

  it.each(BUILTIN_SETTINGS)(
    '%s: answers 200 or a documented 4xx, changes nothing when refused, stores what it accepts',
    async (settingId) => {
      const schema = schemas.find((s) => s.id === settingId)!;
      const operations: ExecutableOperation[] = [
        ...schema.operations,
        ...(schema.index_by ? (['Reorder'] as const) : []),
      ];
      const failures: unknown[] = [];
      let before = await snapshot(t());
      // Read-only, hidden and key columns included: each operation's template is probed whole.
      const columns = schema.columns.filter((c) => c.column_type.type !== 'Widget');
      const sweep = operations.flatMap((operation) =>
        columns.flatMap((column) =>
          Object.entries(VALUE_CLASSES).map(([valueClass, values]) => ({
            operation,
            column,
            valueClass,
            values,
          })),
        ),
      );
      const cases = sweep.reduce((sum, { values }) => sum + values.length, 0);
      for (const { operation, column, valueClass, values } of sweep) {
        // Every value in a full sweep; otherwise one of each class against every column in every
        // operation, a different one from run to run (test/support/sweep.ts).
        const key = `${settingId} ${operation} ${column.id} ${valueClass}`;
        for (const value of sample(key, values, 1)) {
          const fields = fieldsText(schema, operation, seeded[settingId] ?? {}, column, value);
          const res = await rawRequest(t().port, {
            method: 'POST',
            path: `/guilds/${GUILD}/settings`,
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${owner.token}`,
            },
            body: `{"setting":"${settingId}","operation":"${operation}","fields":${fields}}`,
          });
          const after = await snapshot(t());
          const body = res.json as { code?: string; message?: string; data?: unknown };
          const problem = (what: string): void =>
            void failures.push({
              operation,
              column: column.id,
              valueClass,
              value: value.slice(0, 40),
              status: res.status,
              body: res.text.slice(0, 200),
              what,
            });
          if (res.status === 200) {
            before = after;
            if (operation === 'Delete') {
              // Put the entry back for the cases that follow.
              seeded[settingId] = ok(
                await owner.exec(settingId, 'Create', seeded[settingId]),
              ) as Row;
              before = await snapshot(t());
            }
            if (operation !== 'Create' && operation !== 'Update') continue;
            const row = body.data as Row;
            if (!(column.id in row)) continue;
            const sent = JSON.parse(value) as unknown;
            if (!column.readonly.includes(operation)) {
              if (JSON.stringify(row[column.id]) !== JSON.stringify(storedForm(column, sent))) {
                problem('accepted, but stored something else');
              }
            } else if (!column.primary_key && JSON.stringify(row[column.id]) === value) {
              problem('a read-only value was stored');
            }
            continue;
          }
          if (
            res.status < 400 ||
            res.status >= 500 ||
            !['BadRequest', 'NotFound', 'Restricted', 'VersionConflict'].includes(
              body?.code ?? '',
            ) ||
            !body.message
          ) {
            problem('not a documented refusal');
          } else if (after !== before) {
            problem('refused, but the data changed');
          }
        }
      }
      expect(failures).toEqual([]);
      expect(cases).toBeGreaterThan(100);
      expect(t().logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    },
  );
});
