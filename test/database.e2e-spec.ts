import { setTimeout as sleep } from 'node:timers/promises';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { useTestApp } from 'test/support/test-app';

/**
 * The database layer the application runs on (embedded PGlite by default, PostgreSQL when
 * DATABASE_URL is set) must keep transactions isolated under concurrency.
 */
describe('database', () => {
  // As new as at a first start: the boot runs every migration.
  const t = useTestApp({ migrated: false });
  let db: DataSource;

  beforeAll(() => {
    db = t().app.get<DataSource>(getDataSourceToken());
  });

  it('has run the migrations at boot, with synchronize off', async () => {
    expect(db.options.synchronize).toBe(false);
    const tables: { table_name: string }[] = await db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    expect(tables.map((row) => row.table_name)).toContain('migrations');
    expect(await db.showMigrations()).toBe(false);
  });

  describe('20 concurrent transfers from one balance', () => {
    const START = 100;
    const AMOUNT = 15;
    const TRANSFERS = 20;

    beforeAll(async () => {
      await db.query(`CREATE TABLE probe_accounts (id int PRIMARY KEY, balance int NOT NULL)`);
    });
    afterAll(() => db.query(`DROP TABLE probe_accounts`));

    /**
     * Debits first, yields to let other transactions run, then refuses an overdraft by throwing, so
     * a rolled-back transfer has already written half of its change.
     */
    async function transfer(): Promise<boolean> {
      try {
        await db.transaction(async (manager) => {
          await manager.query(`SELECT balance FROM probe_accounts WHERE id = 1 FOR UPDATE`);
          const [[from]]: [{ balance: number }[], number] = await manager.query(
            `UPDATE probe_accounts SET balance = balance - $1 WHERE id = 1 RETURNING balance`,
            [AMOUNT],
          );
          await sleep(Math.random() * 5);
          if (from.balance < 0) throw new Error('insufficient funds');
          await manager.query(`UPDATE probe_accounts SET balance = balance + $1 WHERE id = 2`, [
            AMOUNT,
          ]);
        });
        return true;
      } catch (error) {
        if ((error as Error).message !== 'insufficient funds') throw error;
        return false;
      }
    }

    it.each([1, 2, 3])(
      'commits exactly the affordable ones and never changes the total (run %i)',
      async () => {
        await db.query(`DELETE FROM probe_accounts`);
        await db.query(`INSERT INTO probe_accounts (id, balance) VALUES (1, $1), (2, 0)`, [START]);

        const results = await Promise.all(Array.from({ length: TRANSFERS }, () => transfer()));

        const affordable = Math.floor(START / AMOUNT);
        expect(results.filter(Boolean)).toHaveLength(affordable);
        const rows: { id: number; balance: number }[] = await db.query(
          `SELECT id, balance FROM probe_accounts ORDER BY id`,
        );
        expect(rows).toEqual([
          { id: 1, balance: START - affordable * AMOUNT },
          { id: 2, balance: affordable * AMOUNT },
        ]);
      },
    );
  });

  it('rolls back every statement of a failed transaction', async () => {
    await db.query(`CREATE TABLE probe_items (id int PRIMARY KEY)`);
    await expect(
      db.transaction(async (manager) => {
        await manager.query(`INSERT INTO probe_items (id) VALUES (1), (2)`);
        await manager.query(`INSERT INTO probe_items (id) VALUES (2)`);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await db.query(`SELECT count(*)::int AS n FROM probe_items`)).toEqual([{ n: 0 }]);
  });

  it('keeps serving queries after a failed statement', async () => {
    await expect(db.query(`SELECT * FROM no_such_table`)).rejects.toThrow(/does not exist/);
    expect(await db.query(`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  });
});

describe('the migration to unsigned 64-bit user ids', () => {
  const t = useTestApp();
  const MAX_SIGNED = '9223372036854775807';
  const MAX_UNSIGNED = '18446744073709551615';
  let db: DataSource;

  beforeAll(() => {
    db = t().app.get<DataSource>(getDataSourceToken());
  });

  const columnTypes = (): Promise<unknown[]> =>
    db.query(
      `SELECT table_name, column_name, data_type, numeric_precision, numeric_scale
         FROM information_schema.columns
        WHERE (table_name, column_name) IN (('users', 'id'), ('sessions', 'user_id'))
        ORDER BY table_name`,
    );
  const stored = (): Promise<unknown[]> =>
    db.query(
      `SELECT u.id::text AS id, u.username, s.id AS session, s.type, s.token_hash, s.expires_at
         FROM users u LEFT JOIN sessions s ON s.user_id = u.id ORDER BY u.id, s.id`,
    );
  const addUser = async (id: string): Promise<void> => {
    await db.query(`INSERT INTO users (id, username) VALUES ($1, $2)`, [id, `user ${id}`]);
    await db.query(
      `INSERT INTO sessions (user_id, type, token_hash, expires_at)
       VALUES ($1, 'api', sha256(convert_to($2, 'UTF8')), '2030-01-01T00:00:00Z')`,
      [id, id],
    );
  };

  it('upgrades a database with signed bigint ids with nothing lost, keeping the key and index', async () => {
    const [last] = await db.query<{ name: string }[]>(
      'SELECT name FROM migrations ORDER BY "timestamp" DESC LIMIT 1',
    );
    expect(last.name).toBe('UnsignedUserIds1796624477000');
    await db.undoLastMigration();
    expect(await columnTypes()).toEqual([
      {
        table_name: 'sessions',
        column_name: 'user_id',
        data_type: 'bigint',
        numeric_precision: 64,
        numeric_scale: 0,
      },
      {
        table_name: 'users',
        column_name: 'id',
        data_type: 'bigint',
        numeric_precision: 64,
        numeric_scale: 0,
      },
    ]);
    for (const id of ['1', '424242', MAX_SIGNED]) await addUser(id);
    const before = await stored();
    expect(before).toHaveLength(3);

    await db.runMigrations({ transaction: 'each' });

    expect(await columnTypes()).toEqual([
      {
        table_name: 'sessions',
        column_name: 'user_id',
        data_type: 'numeric',
        numeric_precision: 20,
        numeric_scale: 0,
      },
      {
        table_name: 'users',
        column_name: 'id',
        data_type: 'numeric',
        numeric_precision: 20,
        numeric_scale: 0,
      },
    ]);
    expect(await stored()).toEqual(before);
    expect(await db.showMigrations()).toBe(false);
    const indexes = await db.query<{ indexdef: string }[]>(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'sessions_user_created_idx'`,
    );
    expect(indexes).toEqual([{ indexdef: expect.stringContaining('(user_id, created_at)') }]);

    // The largest id now fits, and the foreign key still holds and cascades.
    await addUser(MAX_UNSIGNED);
    await expect(
      db.query(
        `INSERT INTO sessions (user_id, type, token_hash, expires_at)
         VALUES ('18446744073709551614', 'api', '\\x00', now())`,
      ),
    ).rejects.toThrow(/foreign key/);
    await db.query(`DELETE FROM users WHERE id = $1`, [MAX_SIGNED]);
    const left = await db.query<{ user_id: string }[]>(
      `SELECT user_id::text AS user_id FROM sessions ORDER BY sessions.user_id`,
    );
    expect(left.map((row) => row.user_id)).toEqual(['1', '424242', MAX_UNSIGNED]);
  });

  it('goes back to bigint only when every id fits it, saying which do not', async () => {
    await expect(db.undoLastMigration()).rejects.toThrow(
      `1 user id(s) exceed ${MAX_SIGNED}, which bigint cannot hold: delete those users first`,
    );
    await db.query(`DELETE FROM users WHERE id = $1`, [MAX_UNSIGNED]);
    const before = await stored();
    await db.undoLastMigration();
    expect(await stored()).toEqual(before);
    await db.runMigrations({ transaction: 'each' });
    expect(await stored()).toEqual(before);
  });
});
