import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unusedPort } from 'test/support/ports';

/**
 * A Redis and a PostgreSQL of a test's (or the fault suite's) own, on free loopback ports, that it
 * may kill, stop and restart: never the shared servers others use.
 */

/** Why this machine cannot run a private Redis, or null when it can. */
export function privateRedisUnavailable(): string | null {
  return onPath('redis-server')
    ? null
    : 'redis-server is not installed (apt-get install redis-server)';
}

/** Why this machine cannot run a private PostgreSQL cluster, or null when it can. */
export function privatePostgresUnavailable(): string | null {
  if (postgresBin() === null) {
    return 'no PostgreSQL binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)';
  }
  if (process.getuid?.() === 0 && !userExists('postgres')) {
    return 'running as root without a postgres user to run PostgreSQL as';
  }
  return null;
}

/** A private redis-server without persistence: a restart starts it empty. */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await unusedPort());
    await redis.launch();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** `kill -9`: every connection drops, every key is lost. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts it again on the same port, empty. */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  stop(): Promise<void> {
    return this.kill();
  }

  private async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    await waitFor(() => redisAnswers(this.port), `redis-server on port ${this.port}`);
  }
}

/** A private PostgreSQL cluster in a temporary directory, which may be stopped and started. */
export class PrivatePostgres {
  private constructor(
    readonly port: number,
    private readonly directory: string,
    private readonly bin: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBin();
    if (bin === null) throw new Error(privatePostgresUnavailable() ?? 'no PostgreSQL');
    const directory = mkdtempSync(join(tmpdir(), 'bms-pg-'));
    asPostgresOwner(directory);
    const server = new PrivatePostgres(await unusedPort(), directory, bin);
    server.run('initdb', [
      '-D',
      server.dataDirectory,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    await server.startServer();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDirectory(): string {
    return join(this.directory, 'data');
  }

  async startServer(): Promise<void> {
    this.run('pg_ctl', [
      '-D',
      this.dataDirectory,
      '-l',
      join(this.directory, 'server.log'),
      '-o',
      `-p ${this.port} -k ${this.directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
      '-w',
      'start',
    ]);
    await waitFor(() => portAccepts(this.port), `PostgreSQL on port ${this.port}`);
  }

  /** `pg_ctl stop -m immediate`: every connection dropped at once, no clean shutdown. */
  stopImmediately(): void {
    this.run('pg_ctl', ['-D', this.dataDirectory, '-m', 'immediate', '-w', 'stop']);
  }

  /** Stops it and removes its files. */
  destroy(): void {
    try {
      this.run('pg_ctl', ['-D', this.dataDirectory, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
    rmSync(this.directory, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool);
    const asRoot = process.getuid?.() === 0;
    execFileSync(
      asRoot ? 'runuser' : command,
      asRoot ? ['-u', 'postgres', '--', command, ...args] : args,
      {
        stdio: 'pipe',
        timeout: 60_000,
      },
    );
  }
}

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? null : join(root, versions[0], 'bin');
}

/** As root, PostgreSQL refuses to run: the cluster belongs to the postgres user. */
function asPostgresOwner(directory: string): void {
  if (process.getuid?.() !== 0) return;
  const ids = execFileSync('id', ['-u', 'postgres']).toString().trim();
  const group = execFileSync('id', ['-g', 'postgres']).toString().trim();
  chownSync(directory, Number(ids), Number(group));
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(':')
    .some((directory) => directory !== '' && existsSync(join(directory, command)));
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`${what} did not start within 30 s`);
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.startsWith('+PONG'));
      }
    });
    socket.once('error', () => resolve(false));
  });
}
