import type { PGlite } from '@electric-sql/pglite';

/** A frontend message waiting for the session, and how to hand its answer back. */
interface Turn {
  readonly connection: number;
  readonly message: Uint8Array;
  readonly onData: (data: Uint8Array) => void;
  readonly resolve: (bytes: number) => void;
  readonly reject: (error: unknown) => void;
}

/** Sync: ends an extended-protocol exchange, and leaves the error state one may be in. */
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
/** ReadyForQuery with the idle status: 'Z', length 5, 'I'. */
const READY_IDLE = [0x5a, 0, 0, 0, 5, 0x49];

/**
 * PGlite is one PostgreSQL session; this hands it to several wire-protocol connections (the
 * service's pool and an admin CLI beside it) one exchange at a time. A connection that has begun
 * an exchange keeps the session until PostgreSQL answers "ready, idle": through an extended-query
 * exchange (Parse, Bind, Execute … Sync, whose unnamed statement another connection's Parse would
 * replace) and through a transaction (BEGIN … COMMIT). Meanwhile the other connections' messages
 * wait, in the order they came. `@electric-sql/pglite-socket`'s own queue keeps transactions
 * together but not extended-query exchanges, which a statement larger than one network read
 * splits (docs/operations.md, "Admin CLI").
 *
 * It is the queue a `PGLiteSocketHandler` is given: `enqueue`, `clearQueueForHandler` and
 * `clearTransactionIfNeeded` are that contract.
 */
export class SharedSession {
  private readonly waiting: Turn[] = [];
  /** The connection in the middle of an exchange or a transaction; null when the session is idle. */
  private owner: number | null = null;
  /** Connections that closed while they might own the session: it is reset for the next. */
  private readonly closed = new Set<number>();
  private running = false;

  constructor(private readonly db: PGlite) {}

  /** Runs `message` for `connection` when the session is its turn; resolves with the bytes sent. */
  enqueue(connection: number, message: Uint8Array, onData: Turn['onData']): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ connection, message, onData, resolve, reject });
      void this.drain();
    });
  }

  /** A connection closed: what it still had waiting is dropped. */
  clearQueueForHandler(connection: number): void {
    for (let index = this.waiting.length - 1; index >= 0; index -= 1) {
      const turn = this.waiting[index];
      if (turn.connection !== connection) continue;
      this.waiting.splice(index, 1);
      turn.reject(new Error('The connection closed'));
    }
  }

  /** A connection closed: if it held the session, the session is reset and handed on. */
  async clearTransactionIfNeeded(connection: number): Promise<void> {
    this.closed.add(connection);
    await this.drain();
  }

  /** Serves the waiting turns in order; never throws (a turn's failure is its own). */
  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        // A reset that fails leaves nothing better to do than to go on with the next turn.
        if (this.owner !== null && this.closed.has(this.owner)) await this.reset().catch(() => {});
        const index =
          this.owner === null ? 0 : this.waiting.findIndex((t) => t.connection === this.owner);
        const turn = this.waiting[index];
        if (index === -1 || turn === undefined) break;
        this.waiting.splice(index, 1);
        await this.run(turn);
      }
      // Closed connections that hold nothing need no reset.
      for (const connection of this.closed)
        if (connection !== this.owner) this.closed.delete(connection);
    } finally {
      this.running = false;
    }
  }

  private async run(turn: Turn): Promise<void> {
    if (this.db.closed) {
      turn.reject(new Error('The embedded database has closed'));
      return;
    }
    let bytes = 0;
    let tail: number[] = [];
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(turn.message, {
          onRawData: (data) => {
            bytes += data.length;
            tail = [...tail, ...data.subarray(-READY_IDLE.length)].slice(-READY_IDLE.length);
            turn.onData(data);
          },
        }),
      );
    } catch (error) {
      this.owner = turn.connection;
      turn.reject(error);
      return;
    }
    const idle = tail.length === READY_IDLE.length && tail.every((b, i) => b === READY_IDLE[i]);
    this.owner = idle ? null : turn.connection;
    turn.resolve(bytes);
  }

  /**
   * Ends what a closed connection left open: its exchange (Sync), then its transaction. Nothing is
   * left to end once the database itself has closed (the server stops by closing every connection).
   */
  private async reset(): Promise<void> {
    const owner = this.owner as number;
    this.closed.delete(owner);
    this.owner = null;
    if (this.db.closed) return;
    await this.db.runExclusive(() => this.db.execProtocolRawStream(SYNC, { onRawData: () => {} }));
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
  }
}
