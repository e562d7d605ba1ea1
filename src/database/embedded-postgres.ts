import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PGlite (PostgreSQL in WebAssembly, in-process) served over the PostgreSQL wire protocol on a
 * loopback port, so the application talks to it with the same `pg` driver, type parsers and TypeORM
 * driver as to a real PostgreSQL server.
 *
 * PGlite is one database session. The socket server accepts a single connection and the pool that
 * uses it holds exactly one client, so a transaction owns the session from BEGIN to COMMIT and
 * concurrent transactions queue instead of interleaving.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    /** Connection URL for `pg`; the server listens on 127.0.0.1 only. */
    readonly url: string,
  ) {}

  /** Starts PGlite stored in `directory` (created if needed), or in memory when `directory` is null. */
  static async start(directory: string | null): Promise<EmbeddedPostgres> {
    if (directory !== null) mkdirSync(directory, { recursive: true });
    const db = directory === null ? await PGlite.create() : await PGlite.create(directory);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    return new EmbeddedPostgres(db, server, url);
  }

  /** Stops accepting connections and closes the database, flushing it to disk. */
  async stop(): Promise<void> {
    await this.server.stop();
    if (!this.db.closed) await this.db.close();
  }
}
