import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { StartupFailure, unwritablePath } from 'src/common/startup/startup-failure';
import { seedDataDirectory } from 'src/database/embedded-template';

/** PGlite is one database session: the pool in front of it holds exactly one client. */
export const EMBEDDED_POOL_SIZE = 1;

/**
 * PostgreSQL settings for a single-session embedded database. initdb sizes the buffer pool for a
 * server (128 MB of shared buffers, all of it resident in the WebAssembly heap once touched); one
 * session over a local file system needs far less, and the operating system caches the files.
 */
const EMBEDDED_SETTINGS = ['shared_buffers=16MB', 'max_connections=5'];

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
    /** A throwaway directory (`memory://`), removed when the database stops. */
    readonly scratchDirectory: string | null,
  ) {}

  /**
   * Starts PGlite stored in `directory` (seeded from the prepared template when new), or in a
   * throwaway directory removed at stop when `directory` is null. A stored database is opened by
   * one process at a time (the service or the admin CLI): a second one is refused rather than
   * allowed to corrupt it.
   */
  static async start(directory: string | null): Promise<EmbeddedPostgres> {
    let lockFile: string | null = null;
    let scratchDirectory: string | null = null;
    if (directory !== null) {
      lockFile = lockFileOf(directory);
      takeLock(lockFile, directory);
    } else {
      scratchDirectory = mkdtempSync(join(tmpdir(), 'bms-pglite-'));
    }
    const dataDirectory = directory ?? join(scratchDirectory as string, 'pglite');
    try {
      await seedDataDirectory(dataDirectory);
      // Loaded on first use: a service on PostgreSQL never holds PGlite's code.
      const { PGlite } = await import('@electric-sql/pglite');
      const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
      const db = await PGlite.create(dataDirectory, {
        startParams: [
          ...PGlite.defaultStartParams,
          ...EMBEDDED_SETTINGS.flatMap((setting) => ['-c', setting]),
        ],
      });
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
      await server.start();
      const url = `postgres://postgres@${server.getServerConn()}/postgres`;
      return new EmbeddedPostgres(db, server, url, lockFile, scratchDirectory);
    } catch (error) {
      if (lockFile) rmSync(lockFile, { force: true });
      if (scratchDirectory) rmSync(scratchDirectory, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The live process, other than this one, that holds the stored database in `directory`; null
   * when it is free. `start` takes it on the same terms.
   */
  static holder(directory: string): number | null {
    return lockHolder(lockFileOf(directory));
  }

  /** Stops accepting connections and closes the database, flushing it to disk. */
  async stop(): Promise<void> {
    await this.server.stop();
    if (!this.db.closed) await this.db.close();
    if (this.lockFile) rmSync(this.lockFile, { force: true });
    if (this.scratchDirectory) rmSync(this.scratchDirectory, { recursive: true, force: true });
  }
}

function lockFileOf(directory: string): string {
  return join(directory, '..', 'pglite.pid');
}

/**
 * Claims the data directory for this process, unless a live process holds it. A directory that
 * cannot be created or written is reported as such (not as a lock file that is missing).
 */
function takeLock(lockFile: string, directory: string): void {
  try {
    mkdirSync(dirname(directory), { recursive: true });
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return;
  } catch (error) {
    // EEXIST: held, or left behind by a process that died; look at who.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw unwritablePath(
        dirname(directory),
        error,
        'give this process write access to it, or set DATA_DIR to a directory it can write',
      );
    }
  }
  const holder = lockHolder(lockFile);
  if (holder !== null) {
    throw new StartupFailure(
      `The embedded database in ${directory} is in use by process ${holder}: stop it first, or set DATABASE_URL to a PostgreSQL server`,
    );
  }
  writeFileSync(lockFile, String(process.pid));
}

/** The live process, other than this one, named by the lock file; null when none is. */
function lockHolder(lockFile: string): number | null {
  let holder: number;
  try {
    holder = Number(readFileSync(lockFile, 'utf8').trim());
  } catch {
    return null;
  }
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)
    ? holder
    : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
