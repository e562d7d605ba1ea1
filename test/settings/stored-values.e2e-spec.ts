import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { settingTables } from 'test/support/declared-settings';
import { actor, ok, SINK_FIELDS, type Actor } from 'test/support/demo-world';

/** Every row of every settings table, so that a refused request provably wrote nothing. */
async function settingsRows(t: TestApp): Promise<Record<string, unknown[]>> {
  const database = databaseOf(t);
  const result: Record<string, unknown[]> = {};
  for (const table of new Set([...settingTables(t), 'settings_revisions'])) {
    result[table] = await database.query(`SELECT * FROM "${table}" ORDER BY 1, 2`);
  }
  return result;
}

describe('settings: values the database could refuse are refused first', () => {
  const t = useTestApp();
  let owner: Actor;
  let sinkId: string;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    sinkId = (ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as { id: string }).id;
  });

  afterAll(() => {
    // Not one of these requests may have failed unexpectedly.
    expect(t().logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });

  describe.each(['Update', 'Delete'])('auditlog_sinks %s', (operation) => {
    it.each([
      null,
      'not-a-uuid',
      {},
      [],
      42,
      true,
      1.5,
      `${'0'.repeat(36)}`,
      // A form JSON Schema's uuid format allows and PostgreSQL's uuid type refuses.
      'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
      '{123e4567-e89b-12d3-a456-426614174000}',
    ])('refuses the primary key %j with 400 BadRequest naming it, storing nothing', async (id) => {
      const before = await settingsRows(t());
      const fields = operation === 'Update' ? { id, enabled: false } : { id };
      const res = await owner.exec('auditlog_sinks', operation, fields);
      expect({ status: res.status, code: res.body.code as unknown }).toEqual({
        status: 400,
        code: 'BadRequest',
      });
      expect((res.body.details as { field: string }[]).map((detail) => detail.field)).toEqual([
        'id',
      ]);
      expect(await settingsRows(t())).toEqual(before);
    });
  });

  it('still accepts a well-formed primary key on Update', async () => {
    const updated = ok(
      await owner.exec('auditlog_sinks', 'Update', { id: sinkId, enabled: false }),
    );
    expect(updated).toMatchObject({ id: sinkId, enabled: false });
  });

  it.each([
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['a leap second with an offset', '2016-12-31T23:59:60+00:00'],
    ['a leap second at another hour', '2016-12-31T12:59:60-11:00'],
    ['the 30th of February', '2016-02-30T00:00:00Z'],
  ])('refuses %s as a timestamp filter with 400 BadRequest', async (_name, value) => {
    for (const [setting, column] of [
      ['settings_history', 'created_at'],
      ['auditlog_sinks', 'last_updated_at'],
    ]) {
      const res = await owner.exec(setting, 'View', { [column]: value });
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 400,
        body: {
          code: 'BadRequest',
          message: `Invalid fields: ${column} must be an ISO 8601 timestamp`,
          details: [{ field: column, message: `${column} must be an ISO 8601 timestamp` }],
        },
      });
    }
  });

  it.each([
    ['the first instant of year 0', '0000-01-01T00:00:00Z'],
    ['the last instant of year 9999', '9999-12-31T23:59:59.999Z'],
    ['a date-time with an offset', '2024-03-01T10:00:00+05:30'],
  ])('accepts %s as a timestamp filter', async (_name, value) => {
    expect(ok(await owner.exec('settings_history', 'View', { created_at: value }))).toEqual([]);
  });

  it('filters View by null in a nullable column, matching empty values', async () => {
    const stored = ok(
      await owner.exec('protection', 'Create', {
        id: 'default',
        minimum_account_age: null,
        max_mentions: 5,
        hoist_detection: 0,
        fake_bot_detection: 0,
      }),
    );
    expect(ok(await owner.exec('protection', 'View', { minimum_account_age: null }))).toEqual([
      stored,
    ]);
    expect(ok(await owner.exec('protection', 'View', { max_mentions: null }))).toEqual([]);
  });

  it.each([
    ['guildroles', 'index', 2 ** 31],
    ['protection', 'max_mentions', 2 ** 63],
  ])('refuses %s.%s = %d, beyond the column', async (setting, column, value) => {
    const res = await owner.exec(setting, 'View', { [column]: value });
    expect(res.status).toBe(400);
    expect((res.body.details as { field: string }[])[0].field).toBe(column);
  });

  it.each([
    ['guildmembers', 'Create', { user_id: '18446744073709551616', perm_overrides: [] }, 'user_id'],
    ['guildmembers', 'Create', { user_id: '99999999999999999999', perm_overrides: [] }, 'user_id'],
    ['guildmembers', 'View', { user_id: '99999999999999999999' }, 'user_id'],
    ['guildroles', 'View', { role_id: '18446744073709551616' }, 'role_id'],
  ])(
    'refuses a %s %s id beyond 64 bits with 400 BadRequest',
    async (setting, op, fields, field) => {
      const before = await settingsRows(t());
      const res = await owner.exec(setting, op, fields);
      expect({ status: res.status, code: res.body.code as unknown }).toEqual({
        status: 400,
        code: 'BadRequest',
      });
      expect((res.body.details as { field: string }[]).map((detail) => detail.field)).toEqual([
        field,
      ]);
      expect(await settingsRows(t())).toEqual(before);
    },
  );

  it('accepts the largest 64-bit id', async () => {
    expect(
      ok(await owner.exec('guildmembers', 'View', { user_id: '18446744073709551615' })),
    ).toEqual([]);
  });
});
