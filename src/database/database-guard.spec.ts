import { Client } from 'pg';
import { DependencyUnavailableError, UnconfirmedCommitError } from 'src/common/errors/outage';
import {
  CONNECTION_TIMEOUT_MS,
  DatabaseGuard,
  PROBE_INTERVAL_MS,
  REQUEST_DATABASE_BUDGET_MS,
  withRequestBudget,
} from 'src/database/database-guard';

type Release = (error?: Error | boolean) => void;

/** A pool's answer: a connection, or the error it failed with. */
function pool(outcome: Error | null): jest.Mock<Promise<[Client, Release]>> {
  return jest.fn(() =>
    outcome ? Promise.reject(outcome) : Promise.resolve([{} as Client, jest.fn()]),
  );
}

describe('DatabaseGuard', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('refuses at once, naming the database, once a wait showed it down', async () => {
    const guard = new DatabaseGuard();
    await expect(
      guard.connection(pool(new Error('timeout exceeded when trying to connect'))),
    ).rejects.toThrow('timeout exceeded');
    expect(guard.down).toBe(true);

    const obtain = pool(null);
    const refused = await guard.connection(obtain).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DependencyUnavailableError);
    expect(refused).toMatchObject({
      code: 'InternalError',
      message: 'The database is unavailable; try again later',
      headers: { 'Retry-After': 5 },
    });
    // Refused without asking the pool.
    expect(obtain).not.toHaveBeenCalled();
  });

  it.each([
    ['a statement the server refused', Object.assign(new Error('bad'), { code: '23505' })],
    ['its own statement timeout', Object.assign(new Error('canceling'), { code: '57014' })],
  ])('stays up after %s', async (_name, error) => {
    const guard = new DatabaseGuard();
    await expect(guard.connection(pool(error))).rejects.toBe(error);
    expect(guard.down).toBe(false);
  });

  it('tries the database once a second while it is down, and is up again once it answers', async () => {
    const guard = new DatabaseGuard();
    let answers = false;
    const probe = jest.fn(() => {
      if (!answers) return Promise.reject(new Error('connect ECONNREFUSED'));
      // The probe's statement succeeded: the client class reports it (here, by hand).
      (guard as unknown as { answered(): void }).answered();
      return Promise.resolve();
    });
    guard.probeWith(probe);
    await guard.connection(pool(new Error('Connection terminated unexpectedly'))).catch(() => {});
    expect(guard.down).toBe(true);

    await jest.advanceTimersByTimeAsync(PROBE_INTERVAL_MS * 3);
    expect(probe).toHaveBeenCalledTimes(3);
    expect(guard.down).toBe(true);

    answers = true;
    await jest.advanceTimersByTimeAsync(PROBE_INTERVAL_MS);
    expect(guard.down).toBe(false);
    await jest.advanceTimersByTimeAsync(PROBE_INTERVAL_MS * 3);
    expect(probe).toHaveBeenCalledTimes(4);
    await expect(guard.connection(pool(null))).resolves.toHaveLength(2);
    guard.stop();
  });

  it("gives a request's waits no more than what is left of its budget", async () => {
    const guard = new DatabaseGuard();
    /** A pool that hands a connection over after `ms`. */
    const after = (
      ms: number,
      release: Release = jest.fn(),
    ): jest.Mock<Promise<[Client, Release]>> =>
      jest.fn(
        () =>
          new Promise<[Client, Release]>((resolve) =>
            setTimeout(() => resolve([{} as Client, release]), ms),
          ),
      );
    const lateRelease = jest.fn();
    const outcomes = withRequestBudget(
      () => false,
      async () => {
        // Two waits just within the connection bound leave the request a few milliseconds.
        const slow = CONNECTION_TIMEOUT_MS - 1;
        expect(2 * slow).toBeGreaterThan(REQUEST_DATABASE_BUDGET_MS - 10);
        await guard.connection(after(slow));
        await guard.connection(after(slow));
        const second = await guard
          .connection(after(REQUEST_DATABASE_BUDGET_MS, lateRelease))
          .catch((error: unknown) => error);
        const third = await guard.connection(after(0)).catch((error: unknown) => error);
        return [second, third];
      },
    );
    await jest.advanceTimersByTimeAsync(REQUEST_DATABASE_BUDGET_MS * 2);
    const [second, third] = await outcomes;
    expect(second).toBeInstanceOf(DependencyUnavailableError);
    expect(third).toBeInstanceOf(DependencyUnavailableError);
    // The connection that came after the request gave up went back to the pool.
    expect(lateRelease).toHaveBeenCalled();
    // A budget that ran out is the request's, not an outage.
    expect(guard.down).toBe(false);
  });

  it('bounds nothing but each wait once the request has been answered (an event stream)', async () => {
    const guard = new DatabaseGuard();
    const slow = jest.fn(
      () =>
        new Promise<[Client, Release]>((resolve) =>
          setTimeout(() => resolve([{} as Client, jest.fn()]), CONNECTION_TIMEOUT_MS - 1),
        ),
    );
    const done = withRequestBudget(
      () => true,
      async () => {
        for (let i = 0; i < 5; i++) await guard.connection(slow);
        return 'served';
      },
    );
    await jest.advanceTimersByTimeAsync(CONNECTION_TIMEOUT_MS * 5);
    await expect(done).resolves.toBe('served');
  });

  describe("a statement's answer lost to an outage", () => {
    afterEach(() => jest.restoreAllMocks());

    /** A client of the guard's class whose statements fail as `error` on the wire. */
    function clientFailingWith(guard: DatabaseGuard, error: Error): Client {
      // pg's query has callback overloads; the guard's client uses its promise form here.
      jest.spyOn(Client.prototype, 'query').mockRejectedValue(error as never);
      const Bounded = guard.clientClass();
      return new Bounded();
    }

    it.each(['COMMIT', 'commit;', { text: ' COMMIT ' }])(
      'a COMMIT (%j) may have been applied: it fails saying so',
      async (statement) => {
        const guard = new DatabaseGuard();
        const client = clientFailingWith(guard, new Error('Connection terminated unexpectedly'));
        const failure = await (client.query(statement as string) as Promise<unknown>).catch(
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(UnconfirmedCommitError);
        expect(failure).toMatchObject({
          code: 'InternalError',
          message:
            'The database did not confirm the change, which may have been applied; read it before trying again',
          headers: { 'Retry-After': 5 },
        });
        // The outage is seen all the same.
        expect(guard.down).toBe(true);
        guard.stop();
      },
    );

    it.each(['UPDATE auditlog_sinks SET enabled = true', 'ROLLBACK', 'SELECT 1 -- commit'])(
      'any other statement (%s) fails with the driver error: nothing was committed',
      async (statement) => {
        const guard = new DatabaseGuard();
        const lost = new Error('Connection terminated unexpectedly');
        const client = clientFailingWith(guard, lost);
        await expect(client.query(statement)).rejects.toBe(lost);
        guard.stop();
      },
    );

    it('a COMMIT the server refused (not an outage) fails with its own error', async () => {
      const guard = new DatabaseGuard();
      const refused = Object.assign(new Error('could not serialize access'), { code: '40001' });
      const client = clientFailingWith(guard, refused);
      await expect(client.query('COMMIT')).rejects.toBe(refused);
      expect(guard.down).toBe(false);
    });
  });
});
