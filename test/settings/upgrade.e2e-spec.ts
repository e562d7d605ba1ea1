import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { actor, CHANNEL, GUILD, ok, ROLE, type Actor } from 'test/support/demo-world';
import { connect } from 'test/support/service-database';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';

// Runs on the embedded engine by default and on PostgreSQL with DATABASE_URL.

/**
 * The schema the stored settings are written at: every migration before this timestamp
 * (`1796000000000-GuildStateRestart`), so that every later one runs when the application boots
 * on them. Any migration's timestamp works here; the rows below need only the settings tables and
 * the revisions, which are older.
 */
const STOP_BEFORE = 1_796_000_000_000;

const ALICE = DEMO_IDS.alice;
const CREATED = '2026-11-20T10:00:00.000Z';
const UPDATED = '2026-11-21T11:30:00.000Z';
const SINK_ID = '6f1c2b7e-3d4a-4c1b-9e8f-0a1b2c3d4e5f';
const audit = {
  created_at: CREATED,
  created_by: ALICE,
  last_updated_at: UPDATED,
  last_updated_by: ALICE,
};

/** The settings as the older schema stored them, and as the API must still show them. */
const STORED = {
  guildroles: [
    { role_id: ROLE.moderator, perms: ['protection.view', 'guildroles.*'], index: 2, version: 3 },
    { role_id: ROLE.helper, perms: ['global.rpc.kick', '~rpc.ban'], index: 5, version: 1 },
  ],
  guildmembers: [{ user_id: DEMO_IDS.carol, perm_overrides: ['rpc.kick'], version: 2 }],
  protection: [
    {
      id: 'default',
      minimum_account_age: '604800',
      max_mentions: 10,
      hoist_detection: 1,
      fake_bot_detection: 0,
      version: 1,
    },
  ],
  auditlog_sinks: [
    { id: SINK_ID, channel: CHANNEL.modLog, events: ['lockdown'], enabled: true, version: 1 },
  ],
};

/** The revisions recorded before the upgrade, oldest first. */
const REVISIONS = [
  {
    revision: 1,
    setting: 'guildroles',
    key: { role_id: ROLE.moderator },
    operation: 'Create',
    before: null,
    after: { role_id: ROLE.moderator, perms: ['protection.view'], index: 2 },
    diff: null,
    user_id: ALICE,
    session_id: null,
    session_type: null,
    reverts: null,
    created_at: CREATED,
  },
  {
    revision: 2,
    setting: 'guildroles',
    key: { role_id: ROLE.moderator },
    operation: 'Update',
    before: { role_id: ROLE.moderator, perms: ['protection.view'], index: 2 },
    after: { role_id: ROLE.moderator, perms: ['protection.view', 'guildroles.*'], index: 2 },
    diff: { perms: { before: ['protection.view'], after: ['protection.view', 'guildroles.*'] } },
    user_id: ALICE,
    session_id: null,
    session_type: null,
    reverts: null,
    created_at: UPDATED,
  },
];

/** Writes `STORED` and `REVISIONS` into `database` at the schema before `STOP_BEFORE`. */
async function writeOlderDatabase(database: TestDatabase): Promise<void> {
  const { dataSource, disconnect } = await connect(database);
  try {
    // An embedded test database is a migrated copy; a PostgreSQL one is new: migrate it first.
    await dataSource.runMigrations({ transaction: 'each' });
    const last = async (): Promise<number> => {
      const [row] = await dataSource.query<{ timestamp: string }[]>(
        'SELECT "timestamp" FROM migrations ORDER BY "timestamp" DESC LIMIT 1',
      );
      return Number(row.timestamp);
    };
    while ((await last()) >= STOP_BEFORE) await dataSource.undoLastMigration();
    expect(await dataSource.showMigrations()).toBe(true);

    const insert = async (table: string, row: Record<string, unknown>): Promise<void> => {
      const columns = Object.keys(row);
      const values = columns.map((column) => {
        const value = row[column];
        return Array.isArray(value) || (value !== null && typeof value === 'object')
          ? JSON.stringify(value)
          : value;
      });
      await dataSource.query(
        `INSERT INTO "${table}" (guild_id, ${columns.map((c) => `"${c}"`).join(', ')})
         VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')})`,
        [GUILD, ...values],
      );
    };
    for (const row of STORED.guildroles) await insert('guild_roles', { ...row, ...audit });
    for (const row of STORED.guildmembers) await insert('guild_members', { ...row, ...audit });
    for (const row of STORED.protection) await insert('protection', { ...row, ...audit });
    for (const row of STORED.auditlog_sinks) await insert('auditlog_sinks', { ...row, ...audit });
    for (const revision of REVISIONS) await insert('settings_revisions', revision);
  } finally {
    await disconnect();
  }
}

describe('settings stored before an upgrade', () => {
  let database: TestDatabase;
  let app: TestApp | undefined;
  let owner: Actor;

  beforeAll(async () => {
    database = await createTestDatabase();
    try {
      await writeOlderDatabase(database);
      // The boot runs the remaining migrations.
      app = await createTestApp({ database });
    } catch (error) {
      await database.drop();
      throw error;
    }
    owner = await actor(app, ALICE);
  });
  afterAll(() => app?.close());

  it.each(Object.entries(STORED))('reads %s back unchanged', async (setting, rows) => {
    expect(ok(await owner.exec(setting, 'View', {}))).toEqual(
      rows.map((row) => ({ ...row, ...audit })),
    );
  });

  it('reads the revisions back unchanged, and numbers the next one after them', async () => {
    const revisions = async (): Promise<unknown> => {
      const res = await app!
        .http()
        .get(`/guilds/${GUILD}/settings/revisions`)
        .query({ setting: 'guildroles' })
        .set('Authorization', `Bearer ${owner.token}`);
      expect(res.status).toBe(200);
      return (res.body as { revisions: unknown[] }).revisions;
    };
    // Newest first.
    expect(await revisions()).toEqual([...REVISIONS].reverse());

    const [moderator] = STORED.guildroles;
    ok(
      await owner.exec('guildroles', 'Update', {
        role_id: moderator.role_id,
        version: moderator.version,
        index: 3,
      }),
    );
    expect(await revisions()).toEqual([
      expect.objectContaining({
        revision: 3,
        operation: 'Update',
        diff: expect.objectContaining({
          index: { before: 2, after: 3 },
          version: { before: 3, after: 4 },
        }),
        user_id: ALICE,
      }),
      ...[...REVISIONS].reverse(),
    ]);
  });
});
