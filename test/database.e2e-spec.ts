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
