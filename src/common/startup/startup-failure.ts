import { createServer } from 'node:net';
/**
 * Start-up failures in words for whoever runs the service: what is wrong and what to do. main.ts
 * writes one as the boot's single `fatal` log line (docs/operations.md, "When the service does not
 * start"); configuration errors have their own one-liner (ConfigError).
 */
export class StartupFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupFailure';
  }
}

type SystemError = NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };

function systemError(error: unknown): SystemError | null {
  return error instanceof Error && typeof (error as SystemError).code === 'string' ? error : null;
}

/** The system's words for a file error, without the code and path its message repeats. */
function reasonOf(error: NodeJS.ErrnoException): string {
  return error.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '');
}

/** A file or directory the service must write, and cannot. */
export function unwritablePath(path: string, error: unknown, remedy: string): unknown {
  const cause = systemError(error);
  if (!cause) return error;
  return new StartupFailure(`Cannot write ${path} (${cause.code}: ${reasonOf(cause)}): ${remedy}`, {
    cause,
  });
}

/** Where the service was asked to listen. */
export interface ListenTarget {
  host: string;
  port: number;
}

/**
 * Why the HTTP server could not listen, as a StartupFailure; any other error as it is. The
 * address comes from the configuration (HOST, PORT), which is what the operator changes.
 */
export function listenFailure(error: unknown, { host, port }: ListenTarget): unknown {
  const cause = systemError(error);
  const at = `${host}:${port}`;
  switch (cause?.code) {
    case 'EADDRINUSE':
      return new StartupFailure(
        `Port ${port} is already in use on ${host}: stop the process that holds it, or set PORT to a free port`,
        { cause },
      );
    case 'EACCES':
      return new StartupFailure(
        `Listening on ${at} needs privileges this process does not have: set PORT to 1024 or above`,
        { cause },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new StartupFailure(
        `${host} is not an address of this machine: set HOST to one of its addresses (0.0.0.0 for all, 127.0.0.1 for this machine only)`,
        { cause },
      );
    default:
      return error;
  }
}

/** PostgreSQL's SQLSTATE codes for the connection failures told apart below. */
const PG_DATABASE_MISSING = '3D000';
const PG_LOGIN_REFUSED = new Set(['28P01', '28000']);

/**
 * Why the database at `url` could not be reached, as a StartupFailure; any other error (a failed
 * migration, a bug) as it is. Names the server and database, never the password.
 */
export function databaseConnectionFailure(error: unknown, url: string): unknown {
  const target = describeUrl(url);
  const cause = error instanceof Error ? (error as SystemError) : null;
  if (!cause) return error;
  const code = cause.code;
  if (code === PG_DATABASE_MISSING) {
    return new StartupFailure(
      `The database "${target.database}" does not exist on ${target.server}: create it (createdb ${target.database}), or set DATABASE_URL to one that exists`,
      { cause },
    );
  }
  if (code !== undefined && PG_LOGIN_REFUSED.has(code)) {
    return new StartupFailure(
      `PostgreSQL on ${target.server} refused the login of "${target.user}" (${cause.message}): check the user and password in DATABASE_URL`,
      { cause },
    );
  }
  if (code === 'ECONNREFUSED') {
    return new StartupFailure(
      `Nothing answers at ${target.server} (DATABASE_URL): start PostgreSQL there, or set DATABASE_URL to a server that runs`,
      { cause },
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new StartupFailure(
      `The database host "${target.host}" is not known (${code}): fix the host in DATABASE_URL`,
      { cause },
    );
  }
  if (
    code === 'ETIMEDOUT' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    /timeout/i.test(cause.message)
  ) {
    return new StartupFailure(
      `The database at ${target.server} cannot be reached (${code ?? cause.message}): check the network and DATABASE_URL`,
      { cause },
    );
  }
  return error;
}

function describeUrl(url: string): {
  server: string;
  host: string;
  database: string;
  user: string;
} {
  try {
    const parsed = new URL(url);
    return {
      server: `${parsed.hostname}:${parsed.port || '5432'}`,
      host: parsed.hostname,
      database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
      user: decodeURIComponent(parsed.username) || 'postgres',
    };
  } catch {
    return { server: 'the configured server', host: '?', database: '?', user: '?' };
  }
}

/**
 * Fails at once, as `listenFailure` says, when the service could not listen on `target`: tried
 * before anything boots (the database takes seconds, and a port in use would only show after it).
 * It binds and lets go at once; the service binds again once booted (a port taken in between
 * fails then, with the same line). PORT=0 (any free port) needs no check.
 */
export async function assertCanListen(target: ListenTarget): Promise<void> {
  if (target.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port: target.port, host: target.host, exclusive: true }, resolve);
    });
  } catch (error) {
    throw listenFailure(error, target);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
