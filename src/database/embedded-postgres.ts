import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** PGlite is one database session: the pool in front of it holds exactly one client. */
export const EMBEDDED_POOL_SIZE = 1;

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
    private readonly lockFile: string | null,
  ) {}

  /**
   * Starts PGlite stored in `directory` (created if needed), or in memory when `directory` is null.
   * A stored database is opened by one process at a time (the service or the admin CLI): a second
   * one is refused rather than allowed to corrupt it.
   */
  static async start(directory: string | null): Promise<EmbeddedPostgres> {
    let lockFile: string | null = null;
    if (directory !== null) {
      mkdirSync(directory, { recursive: true });
      lockFile = join(directory, '..', 'pglite.pid');
      takeLock(lockFile, directory);
    }
    try {
      const db = directory === null ? await PGlite.create() : await PGlite.create(directory);
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
      await server.start();
      const url = `postgres://postgres@${server.getServerConn()}/postgres`;
      return new EmbeddedPostgres(db, server, url, lockFile);
    } catch (error) {
      if (lockFile) rmSync(lockFile, { force: true });
      throw error;
    }
  }

  /** Stops accepting connections and closes the database, flushing it to disk. */
  async stop(): Promise<void> {
    await this.server.stop();
    if (!this.db.closed) await this.db.close();
    if (this.lockFile) rmSync(this.lockFile, { force: true });
  }
}

/** Claims the data directory for this process, unless a live process holds it. */
function takeLock(lockFile: string, directory: string): void {
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return;
  } catch {
    // Held, or left behind by a process that died: look at who.
  }
  const holder = Number(readFileSync(lockFile, 'utf8').trim());
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
    throw new Error(
      `The embedded database in ${directory} is in use by process ${holder}; stop it first (or use DATABASE_URL=postgres://…)`,
    );
  }
  writeFileSync(lockFile, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
