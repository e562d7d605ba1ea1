import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { StartupFailure, unwritablePath } from 'src/common/startup/startup-failure';
import { SharedSession } from 'src/database/embedded-session';
import { seedDataDirectory } from 'src/database/embedded-template';

/** PGlite is one database session: the pool in front of it holds exactly one client. */
export const EMBEDDED_POOL_SIZE = 1;

/**
 * Connections the embedded server accepts at once: the service's one, and admin CLI commands
 * beside it. One more is refused with PostgreSQL's "too many clients" error.
 */
const MAX_CONNECTIONS = 4;

/**
 * PostgreSQL settings for a single-session embedded database. initdb sizes the buffer pool for a
 * server (128 MB of shared buffers, all of it resident in the WebAssembly heap once touched); one
 * session over a local file system needs far less, and the operating system caches the files.
 */
const EMBEDDED_SETTINGS = ['shared_buffers=16MB', 'max_connections=5'];

/**
 * PGlite (PostgreSQL in WebAssembly, in-process) served over the PostgreSQL wire protocol on a Unix
 * socket, so the application talks to it with the same `pg` driver, type parsers and TypeORM driver
 * as to a real PostgreSQL server.
 *
 * The socket lives in a directory of its own that only this user can enter (mode 0700), so only
 * this user's processes connect; the lock file names it, so an admin CLI command can work beside
 * the running service (`share`). PGlite is one database session: `SharedSession` hands it to one
 * connection's exchange or transaction at a time, and the service's pool holds one client.
 */
export class EmbeddedPostgres {
  private readonly connections = new Set<Socket>();

  private constructor(
    private readonly db: PGlite,
    private readonly server: Server,
    /** Connection URL for `pg`: the Unix socket's directory, percent-encoded as the host. */
    readonly url: string,
    private readonly socketDirectory: string,
    private readonly lockFile: string | null,
    /** A throwaway directory (`memory://`), removed when the database stops. */
    readonly scratchDirectory: string | null,
  ) {
    server.on('connection', (socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
  }

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
    // Short and private: a Unix socket's path has about 100 bytes, and mkdtemp makes it mode 0700.
    const socketDirectory = mkdtempSync(join(tmpdir(), 'bms-pg-'));
    try {
      await seedDataDirectory(dataDirectory);
      // Loaded on first use: a service on PostgreSQL never holds PGlite's code.
      const { PGlite } = await import('@electric-sql/pglite');
      const db = await PGlite.create(dataDirectory, {
        startParams: [
          ...PGlite.defaultStartParams,
          ...EMBEDDED_SETTINGS.flatMap((setting) => ['-c', setting]),
        ],
      });
      const server = await serve(db, socketDirectory);
      const url = `postgres://postgres@${encodeURIComponent(socketDirectory)}/postgres`;
      return new EmbeddedPostgres(db, server, url, socketDirectory, lockFile, scratchDirectory);
    } catch (error) {
      if (lockFile) rmSync(lockFile, { force: true });
      rmSync(socketDirectory, { recursive: true, force: true });
      if (scratchDirectory) rmSync(scratchDirectory, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The URL of the embedded database that a live process other than this one holds in `directory`
   * and shares (the running service); null when none does.
   */
  static shared(directory: string): string | null {
    const lock = readLock(lockFileOf(directory));
    return lock !== null && lock.url !== null && isHeldByOther(lock.pid) ? lock.url : null;
  }

  /**
   * Names this database's socket in the lock file, so that admin CLI commands run beside this
   * process connect to it instead of being refused. Called once the service is up (its
   * migrations have run).
   */
  share(): void {
    if (!this.lockFile) return;
    const next = `${this.lockFile}.${process.pid}`;
    writeFileSync(next, `${process.pid}\n${this.url}\n`);
    renameSync(next, this.lockFile);
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
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.connections) socket.destroy();
    await closed;
    if (!this.db.closed) await this.db.close();
    if (this.lockFile) rmSync(this.lockFile, { force: true });
    rmSync(this.socketDirectory, { recursive: true, force: true });
    if (this.scratchDirectory) rmSync(this.scratchDirectory, { recursive: true, force: true });
  }
}

/**
 * Serves `db` on `directory/.s.PGSQL.5432` (the name `pg` derives from a socket directory and the
 * default port), one `PGLiteSocketHandler` per connection over one `SharedSession`.
 */
async function serve(db: PGlite, directory: string): Promise<Server> {
  const { PGLiteSocketHandler } = await import('@electric-sql/pglite-socket');
  const session = new SharedSession(db);
  const server = createServer((socket) => {
    if (open.size >= MAX_CONNECTIONS) {
      socket.end(tooManyClients());
      return;
    }
    const handler = new PGLiteSocketHandler({ queryQueue: session as never, closeOnDetach: true });
    open.add(handler);
    const forget = (): void => void open.delete(handler);
    handler.addEventListener('close', forget);
    handler.addEventListener('error', forget);
    handler.attach(socket).catch(() => {
      forget();
      socket.destroy();
    });
  });
  const open = new Set<InstanceType<typeof PGLiteSocketHandler>>();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(join(directory, '.s.PGSQL.5432'), () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** PostgreSQL's own refusal (SQLSTATE 53300), which `pg` reports as an error with that text. */
function tooManyClients(): Buffer {
  const fields = Buffer.from(
    `SFATAL\0VFATAL\0C53300\0Msorry, too many clients already (the embedded database serves ${MAX_CONNECTIONS} connections)\0\0`,
  );
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
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
  const lock = readLock(lockFile);
  return lock !== null && isHeldByOther(lock.pid) ? lock.pid : null;
}

/** The lock file: the holder's process id, then the URL it shares its database on (`share`). */
function readLock(lockFile: string): { pid: number; url: string | null } | null {
  let lines: string[];
  try {
    lines = readFileSync(lockFile, 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]?.trim());
  const url = lines[1]?.trim() || null;
  return Number.isInteger(pid) && pid > 0 ? { pid, url } : null;
}

function isHeldByOther(pid: number): boolean {
  return pid !== process.pid && isAlive(pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
