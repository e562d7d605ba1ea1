import { AsyncLocalStorage } from 'node:async_hooks';
import { Client, type QueryConfig } from 'pg';
import {
  DependencyUnavailableError,
  isDatabaseOutage,
  UnconfirmedCommitError,
} from 'src/common/errors/outage';

/** The server ends a statement that runs longer (`statement_timeout`, docs/request-costs.md). */
export const STATEMENT_TIMEOUT_MS = 10_000;
/**
 * The client gives up on a statement this much later than the server would have ended it: a server
 * that answers cancels its own statement first (and keeps the connection); a stalled one does not.
 */
const CLIENT_GRACE_MS = 250;
/** The longest wait for a connection of the pool (docs/operations.md). */
export const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * What one request may wait on the database in all, its connection waits and statements added up,
 * before it is answered: past it, the request fails instead of waiting on.
 */
export const REQUEST_DATABASE_BUDGET_MS = 10_000;
/** While the database is known to be down, the guard tries it this often; callers fail at once. */
export const PROBE_INTERVAL_MS = 1_000;

/** A request's database time: what it has spent, and whether its answer has started. */
interface Budget {
  spentMs: number;
  /** True once the response has begun (an event stream's later work is no longer the request's). */
  answered(): boolean;
}

const budgets = new AsyncLocalStorage<Budget>();

/**
 * Runs `work` (a request's handling) with a database budget of `REQUEST_DATABASE_BUDGET_MS`, which
 * every connection wait and statement made in its async context spends, until its answer begins.
 */
export function withRequestBudget<T>(answered: () => boolean, work: () => T): T {
  return budgets.run({ spentMs: 0, answered }, work);
}

/** The budget of the request running now, or undefined outside one or once it is answered. */
function currentBudget(): Budget | undefined {
  const budget = budgets.getStore();
  return budget && !budget.answered() ? budget : undefined;
}

/** How long the caller may wait for one step: the step's own bound, or what is left of its budget. */
function allowedWait(bound: number, budget: Budget | undefined): number {
  return budget ? Math.min(bound, REQUEST_DATABASE_BUDGET_MS - budget.spentMs) : bound;
}

type Release = (error?: Error | boolean) => void;
type Obtain = () => Promise<[Client, Release]>;

/**
 * Every wait on one data source's database, bounded (docs/operations.md, "Faults"): a connection
 * within 5 s, a statement within 10 s, a request's waits within 10 s in all. Once a wait shows the
 * database down or stalled, callers are refused at once (500 naming the database, with
 * `Retry-After`) while the guard tries the database itself once a second (`SELECT 1` through the
 * pool); the first statement it answers ends that.
 */
export class DatabaseGuard {
  private downSince: number | null = null;
  private probe: (() => Promise<unknown>) | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;

  /** Whether the last waits showed the database down (for tests and the log). */
  get down(): boolean {
    return this.downSince !== null;
  }

  /** How the guard tries the database while it is down: a statement through the pool. */
  probeWith(probe: () => Promise<unknown>): void {
    this.probe = probe;
  }

  /** Stops trying the database (the pool is closing). */
  stop(): void {
    this.probe = null;
    this.stopProbing();
  }

  /** The pg client class the pool creates, whose statements this guard bounds. */
  clientClass(): typeof Client {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the class below reports to it
    const guard = this;
    return class BoundedClient extends Client {
      override query(...args: unknown[]): never {
        return guard.boundedQuery(this, args, (bounded) =>
          (Client.prototype.query as (...a: unknown[]) => unknown).apply(this, bounded),
        ) as never;
      }
    };
  }

  /** Wraps TypeORM's way of taking a connection from the pool (`obtainMasterConnection`). */
  async connection(obtain: Obtain): Promise<[Client, Release]> {
    this.admit();
    const budget = currentBudget();
    const allowed = allowedWait(CONNECTION_TIMEOUT_MS, budget);
    if (allowed <= 0) throw this.spent();
    const started = performance.now();
    try {
      const pending = obtain();
      // The pool's own timeout is the connection bound; a shorter budget gives up sooner and
      // returns the connection once it comes.
      return allowed >= CONNECTION_TIMEOUT_MS
        ? await pending
        : await within(pending, allowed, () => this.spent());
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      if (budget) budget.spentMs += performance.now() - started;
    }
  }

  private boundedQuery(
    client: Client,
    args: unknown[],
    run: (args: unknown[]) => unknown,
  ): unknown {
    type Callback = (error: Error | null, result?: unknown) => void;
    const [config, values, callback] = args as [unknown, unknown, Callback | undefined];
    // Query objects of their own (cursors, streams) carry their own settings.
    if (typeof (config as { submit?: unknown } | null)?.submit === 'function') return run(args);
    const budget = currentBudget();
    const allowed = allowedWait(STATEMENT_TIMEOUT_MS + CLIENT_GRACE_MS, budget);
    const started = performance.now();
    const commit = isCommit(config);
    const settle = (error: unknown): void => {
      if (budget) budget.spentMs += performance.now() - started;
      if (error === undefined) {
        if (this.downSince !== null) this.answered();
        return;
      }
      this.failed(error);
      // The statement is still under way on a connection that no longer waits for it: dropped,
      // so the pool does not hand it to the next caller.
      if ((error as Error).message === 'Query read timeout') {
        (
          client as unknown as { connection: { stream: { destroy(): void } } }
        ).connection.stream.destroy();
      }
    };
    const done =
      typeof callback === 'function'
        ? callback
        : typeof values === 'function'
          ? (values as Callback)
          : null;
    if (allowed <= 0) {
      const error = this.spent();
      if (done) return void done(error);
      return Promise.reject(error);
    }
    const bounded: QueryConfig & { query_timeout: number } =
      typeof config === 'string'
        ? { text: config, query_timeout: allowed }
        : { ...(config as QueryConfig), query_timeout: allowed };
    // A COMMIT sent and not answered may have been applied: its failure says so (UnconfirmedCommitError).
    const unconfirmed = (error: unknown): unknown =>
      commit && isDatabaseOutage(error)
        ? new UnconfirmedCommitError(String((error as Error).message))
        : error;
    if (done) {
      const wrapped: Callback = (error, result) => {
        settle(error ?? undefined);
        done(error && (unconfirmed(error) as Error), result);
      };
      return run(typeof values === 'function' ? [bounded, wrapped] : [bounded, values, wrapped]);
    }
    return (run([bounded, values]) as Promise<unknown>).then(
      (result) => {
        settle(undefined);
        return result;
      },
      (error: unknown) => {
        settle(error);
        throw unconfirmed(error);
      },
    );
  }

  /** Refuses at once while the database is down. */
  private admit(): void {
    if (this.downSince === null) return;
    throw new DependencyUnavailableError(
      'database',
      `refused without waiting: the database has not answered since ${new Date(this.downSince).toISOString()}`,
    );
  }

  private failed(error: unknown): void {
    if (!isDatabaseOutage(error) || error instanceof DependencyUnavailableError) return;
    this.downSince ??= Date.now();
    if (this.probe && !this.probeTimer) {
      // Outside the request that saw the failure: the tries spend no request's budget.
      this.probeTimer = budgets.exit(() =>
        setInterval(() => void this.tryAgain(), PROBE_INTERVAL_MS),
      );
      this.probeTimer.unref();
    }
  }

  private answered(): void {
    this.downSince = null;
    this.stopProbing();
  }

  /** One statement at a time; its success (through the client class) ends the outage. */
  private async tryAgain(): Promise<void> {
    if (this.probing || !this.probe) return;
    this.probing = true;
    try {
      await this.probe();
    } catch {
      // Still down: the next try is a second away.
    } finally {
      this.probing = false;
    }
  }

  private stopProbing(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }

  private spent(): DependencyUnavailableError {
    return new DependencyUnavailableError(
      'database',
      `the request waited ${REQUEST_DATABASE_BUDGET_MS / 1000} s on the database in all`,
    );
  }
}

/** Whether a statement is a transaction's COMMIT (TypeORM sends it as plain text). */
function isCommit(config: unknown): boolean {
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
  return typeof text === 'string' && /^\s*commit\s*;?\s*$/i.test(text);
}

/** `pending`'s connection, or `timedOut()` after `ms`; a connection that comes later is returned. */
function within(
  pending: Promise<[Client, Release]>,
  ms: number,
  timedOut: () => Error,
): Promise<[Client, Release]> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timedOut());
    }, ms);
    pending.then(
      (connection) => {
        clearTimeout(timer);
        if (late) connection[1]();
        else resolve(connection);
      },
      (error: Error) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}
