import type { Response } from 'supertest';
import type { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { settingsLockKey } from 'src/settings/engine/guild-settings-writers';
import { databaseOf, emulatorOf } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE, SINK_FIELDS, type Actor } from 'test/support/demo-world';
import { faultsOf } from 'test/support/emulator-faults';

// Every test here runs on the embedded engine by default and on PostgreSQL with DATABASE_URL.

describe('settings: concurrent changes of one entry', () => {
  const t = useTestApp();

  it('applies both updates, one after the other, and loses neither', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.vip,
        perms: ['rpc.view'],
        index: 7,
      }),
    );
    const [a, b] = await Promise.all([
      owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.view', 'rpc.kick'] }),
      owner.exec('guildroles', 'Update', { role_id: ROLE.vip, index: 8 }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [row] = ok(await owner.exec('guildroles', 'View', { role_id: ROLE.vip })) as Record<
      string,
      unknown
    >[];
    expect(row).toMatchObject({ perms: ['rpc.view', 'rpc.kick'], index: 8 });
    const history = ok(
      await owner.exec('settings_history', 'View', { setting: 'guildroles', operation: 'Update' }),
    ) as {
      before: { perms: string[]; index: number };
    }[];
    // The second update saw the first one's result: each change was made on the latest row.
    expect(history).toHaveLength(2);
    const befores = history.map((h) => h.before);
    expect(befores).toContainEqual(expect.objectContaining({ perms: ['rpc.view'], index: 7 }));
  });

  it.each([
    ['guildroles', { role_id: ROLE.eventHost, perms: ['rpc.view'], index: 20 }, 'role_id'],
    ['guildmembers', { user_id: DEMO_IDS.bob, perm_overrides: ['rpc.view'] }, 'user_id'],
    [
      'commands',
      { command: 'ban', enabled: false, allowed_roles: [], disabled_channels: [] },
      'command',
    ],
  ])(
    'ten identical concurrent Creates of one %s entry: one is stored, nine answer 400',
    async (setting, fields, key) => {
      const owner = await actor(t(), DEMO_IDS.alice);
      const errorsBefore = errorLines(t());
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => owner.exec(setting, 'Create', fields)),
      );
      const message = `${setting} already has an entry ${key} ${String((fields as Record<string, unknown>)[key])}; use Update`;
      expect(answers.map((res) => res.status).sort()).toEqual([200, ...Array(9).fill(400)]);
      for (const res of answers.filter((r) => r.status === 400)) {
        expect(res.body).toEqual({
          message,
          code: 'BadRequest',
          details: [{ field: key, message }],
        });
      }
      const keyFilter = { [key]: (fields as Record<string, unknown>)[key] };
      expect(ok(await owner.exec(setting, 'View', keyFilter))).toHaveLength(1);
      const audit = ok(
        await owner.exec('settings_history', 'View', { setting, operation: 'Create' }),
      ) as { after: Record<string, unknown> }[];
      expect(audit.filter((row) => row.after[key] === keyFilter[key])).toHaveLength(1);
      expect(errorLines(t())).toBe(errorsBefore);
    },
  );
});

describe('settings: a Create racing a writer outside the settings lock', () => {
  const t = useTestApp();

  // On PostgreSQL the request's insert waits on the uncommitted row and then hits the primary
  // key; on PGlite it waits for the connection and the pre-check sees the row. Same answer.
  it('answers 400 "use Update", not 500, when the row appears under it', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(await owner.exec('guildroles', 'View', {}));
    const res = await whileHoldingTheLock(
      t(),
      (runner) =>
        runner.query(
          `INSERT INTO guild_roles (guild_id, role_id, perms, index, created_at, created_by, last_updated_at, last_updated_by)
           VALUES ($1, $2, '[]', 30, now(), $3, now(), $3)`,
          [GUILD, ROLE.vip, DEMO_IDS.alice],
        ),
      () => owner.exec('guildroles', 'Create', { role_id: ROLE.vip, perms: [], index: 31 }),
      { takeLock: false },
    );
    const message = `guildroles already has an entry role_id ${ROLE.vip}; use Update`;
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 400,
      body: { message, code: 'BadRequest', details: [{ field: 'role_id', message }] },
    });
    expect(errorLines(t())).toBe(0);
  });
});

/**
 * A write is checked against the permission data as it is when the write is applied: another
 * write that holds the guild's settings lock (here: the test, mid-transaction) is waited for, and
 * what it changed is seen, even when this instance had the old data cached.
 */
describe('settings: a write is checked against the data committed before it', () => {
  const t = useTestApp();
  let owner: Actor;
  let moderator: Actor;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    // The demo user holds the Moderator role (position 9, above Helper at 8).
    moderator = await actor(t(), DEMO_IDS.demoUser);
  });

  it('refuses a role-entry update whose permission was revoked while it waited', async () => {
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['guildroles.update', 'guildroles.view', 'rpc.*'],
        index: 1,
      }),
    );
    ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.helper, perms: [], index: 5 }));
    // The moderator's permission data is now cached on this instance.
    ok(await moderator.exec('guildroles', 'View', {}));

    const res = await whileHoldingTheLock(
      t(),
      async (runner) => {
        await lockRow(runner, 'guild_roles', 'role_id', ROLE.helper);
        await runner.query(
          `UPDATE guild_roles SET perms = '["guildroles.view", "rpc.*"]' WHERE guild_id = $1 AND role_id = $2`,
          [GUILD, ROLE.moderator],
        );
      },
      () => moderator.exec('guildroles', 'Update', { role_id: ROLE.helper, perms: ['rpc.kick'] }),
    );

    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 403,
      body: {
        message: 'You need the permission guildroles.update in this guild',
        code: 'Restricted',
      },
    });
    expect(await storedPerms(t(), 'guild_roles', 'perms', 'role_id', ROLE.helper)).toEqual([]);
  });

  it("refuses a member-override update whose author's override was revoked while it waited", async () => {
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.demoUser,
        perm_overrides: ['guildmembers.update', 'rpc.*'],
      }),
    );
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.bob,
        perm_overrides: ['rpc.view'],
      }),
    );
    ok(await moderator.exec('guildroles', 'View', {}));

    const res = await whileHoldingTheLock(
      t(),
      async (runner) => {
        await lockRow(runner, 'guild_members', 'user_id', DEMO_IDS.bob);
        await runner.query(
          `UPDATE guild_members SET perm_overrides = '["rpc.*"]' WHERE guild_id = $1 AND user_id = $2`,
          [GUILD, DEMO_IDS.demoUser],
        );
      },
      () =>
        moderator.exec('guildmembers', 'Update', {
          user_id: DEMO_IDS.bob,
          perm_overrides: ['rpc.view', 'rpc.kick'],
        }),
    );

    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 403,
      body: {
        message: 'You need the permission guildmembers.update in this guild',
        code: 'Restricted',
      },
    });
    expect(
      await storedPerms(t(), 'guild_members', 'perm_overrides', 'user_id', DEMO_IDS.bob),
    ).toEqual(['rpc.view']);
  });
});

/**
 * Two racing writes, many times: the moderator updates the Helper entry (allowed only while the
 * moderator's own entry ranks above it) while the owner reorders the two entries so that Helper
 * ranks above the moderator. Every outcome must be that of one order or the other: the moderator's
 * update first (both succeed, Helper ends at the owner's index 4), or the reorder first (the
 * update is refused). Never the update applied on top of the reorder (Helper back at index 5).
 */
describe('settings: racing writes end as if applied one after the other', () => {
  const t = useTestApp();
  const REPETITIONS = 15;

  it(`holds over ${REPETITIONS} races between a demotion and an update it forbids`, async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    const moderator = await actor(t(), DEMO_IDS.demoUser);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['guildroles.update', 'rpc.*'],
        index: 1,
      }),
    );
    ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.helper, perms: [], index: 5 }));

    const outcomes: string[] = [];
    for (let i = 0; i < REPETITIONS; i++) {
      ok(
        await owner.exec('guildroles', 'Reorder', [
          { role_id: ROLE.moderator, index: 1 },
          { role_id: ROLE.helper, index: 5 },
        ]),
      );
      ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, perms: [] }));
      const [update, reorder] = await Promise.all([
        moderator.exec('guildroles', 'Update', {
          role_id: ROLE.helper,
          perms: [`rpc.p${i}`],
          index: 5,
        }),
        owner.exec('guildroles', 'Reorder', [
          { role_id: ROLE.moderator, index: 6 },
          { role_id: ROLE.helper, index: 4 },
        ]),
      ]);
      expect(reorder.status).toBe(200);
      const helper = (await viewEntry(owner, ROLE.helper)) as { perms: string[]; index: number };
      if (update.status === 200) {
        outcomes.push('update first');
        expect(helper).toMatchObject({ perms: [`rpc.p${i}`], index: 4 });
      } else {
        outcomes.push('reorder first');
        expect({ status: update.status, body: update.body as unknown }).toEqual({
          status: 403,
          body: {
            message: 'The index must rank below your own (a higher number than yours)',
            code: 'Restricted',
          },
        });
        expect(helper).toMatchObject({ perms: [], index: 4 });
      }
    }
    expect(outcomes).toHaveLength(REPETITIONS);
  });
});

function errorLines(t: TestApp): number {
  return t.logs.lines.filter((line) => line.level === 'error' || line.level === 'fatal').length;
}

async function viewEntry(owner: Actor, roleId: string): Promise<unknown> {
  const rows = ok(await owner.exec('guildroles', 'View', { role_id: roleId })) as unknown[];
  expect(rows).toHaveLength(1);
  return rows[0];
}

async function lockRow(
  runner: QueryRunner,
  table: string,
  keyColumn: string,
  key: string,
): Promise<void> {
  await runner.query(
    `SELECT 1 FROM ${table} WHERE guild_id = $1 AND ${keyColumn} = $2 FOR UPDATE`,
    [GUILD, key],
  );
}

async function storedPerms(
  t: TestApp,
  table: string,
  column: string,
  keyColumn: string,
  key: string,
): Promise<unknown> {
  const rows = await databaseOf(t).query<{ perms: unknown }[]>(
    `SELECT ${column} AS perms FROM ${table} WHERE guild_id = $1 AND ${keyColumn} = $2`,
    [GUILD, key],
  );
  return rows[0]?.perms;
}

/**
 * Runs `change` in a transaction that holds the guild's settings lock (as a concurrent settings
 * write does), starts `request`, waits until the request is blocked on the database, then commits
 * and returns the request's answer.
 */
async function whileHoldingTheLock(
  t: TestApp,
  change: (runner: QueryRunner) => Promise<void>,
  request: () => PromiseLike<Response>,
  { takeLock = true }: { takeLock?: boolean } = {},
): Promise<Response> {
  const dataSource = databaseOf(t);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  let pending: Promise<Response>;
  try {
    await runner.startTransaction();
    if (takeLock) {
      await runner.query('SELECT pg_advisory_xact_lock($1::bigint)', [settingsLockKey(GUILD)]);
    }
    await change(runner);
    pending = Promise.resolve(request());
    await waitUntilBlocked(t, dataSource);
    await runner.commitTransaction();
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    // Released before the request is awaited: on PGlite it waits for this very connection.
    await runner.release();
  }
  return pending;
}

/**
 * Until a request waits on the database: on PGlite (one connection, held by the test) for the
 * pool, on PostgreSQL for a lock the test's transaction holds.
 */
async function waitUntilBlocked(t: TestApp, dataSource: DataSource): Promise<void> {
  const pool = (dataSource.driver as PostgresDriver).master as { waitingCount: number };
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (t.database.engine === 'pglite') {
      if (pool.waitingCount > 0) return;
    } else {
      const [{ waiting }] = await dataSource.query<{ waiting: number }[]>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (waiting > 0) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the request never waited on the database');
}

describe('settings: the guild lock is held only across database work', () => {
  const t = useTestApp();

  it('looks up the members a change names before taking the lock, so other writers never wait on the platform', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    // The author's own member lookup is cached now; the target's is not.
    ok(await owner.exec('auditlog_sinks', 'View', {}));
    faultsOf(emulatorOf(t())).inject('GET /guilds/:guild_id/members/:user_id', {
      kind: 'hang',
      delayMs: 3_000,
    });
    let slowDone = false;
    const slow = owner
      .exec('guildmembers', 'Create', { user_id: DEMO_IDS.carol, perm_overrides: ['rpc.view'] })
      .then((res) => {
        slowDone = true;
        return res;
      });
    // Let the slow request reach its platform call.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS);
    expect({ status: other.status, slowDoneFirst: slowDone }).toEqual({
      status: 200,
      slowDoneFirst: false,
    });
    expect((await slow).status).toBe(200);
  });
});
