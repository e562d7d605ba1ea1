import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import { requestContext } from 'src/common/http/request-context';
import { serializeError } from 'src/common/logging/error-serializer';
import type { LogLevel } from 'src/common/logging/log-level';

/**
 * The root logger: JSON lines (pino), level names as strings, and credentials removed should a
 * header object or a token field ever be logged; errors lose the request data database errors carry. Writes to stdout are asynchronous (they batch
 * under load instead of blocking each request); `flushLogs` empties the buffer before the process
 * exits.
 */
export function createRootLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const output = { ended: false };
  const root = pino(
    {
      level,
      // Children (Fastify's logger is one) keep the level they were made with; this hook, which
      // they share with the root, is what `endLogs` stops them all with.
      hooks: {
        logMethod(args, method) {
          if (!output.ended) method.apply(this, args);
        },
      },
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'headers.cookie',
          '*.token',
          '*.access_token',
          '*.refresh_token',
          '*.client_secret',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
  outputs.set(root, output);
  return root;
}

/** Per root logger: whether its output has ended (`endLogs`). */
const outputs = new WeakMap<Logger, { ended: boolean }>();

/**
 * Ends a root logger's output: no line of it or of any child of it is written from now on, so the
 * line a failed boot ends with stays the last (src/main.ts).
 */
export function endLogs(root: Logger): void {
  const output = outputs.get(root);
  if (output) output.ended = true;
  root.level = 'silent';
}

/** Writes out whatever the logger still holds. */
export function flushLogs(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/**
 * Contexts whose error lines are Nest's reports of errors it also throws to the caller: creating
 * the application (ExceptionHandler) and listening (NestApplication).
 */
const NEST_THROWN_FAILURES = new Set(['ExceptionHandler', 'NestApplication']);

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's logger on top of the root pino logger. Lines carry the Nest context and, during a
 * request, its `request_id`. Accepts Nest's `(message, context)` and pino's `(object, message)`.
 */
export class AppLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(requested: Level, message: unknown, rest: unknown[]): void {
    // Nest passes the context as the last string argument.
    const context =
      rest.length > 0 && typeof rest.at(-1) === 'string' ? (rest.pop() as string) : undefined;
    // Nest logs a failed boot or listen before throwing it to its caller (abortOnError is off);
    // main.ts then writes the one line that says what is wrong, so Nest's is detail for debugging.
    const level =
      requested === 'error' && context !== undefined && NEST_THROWN_FAILURES.has(context)
        ? 'debug'
        : requested;
    if (!this.root.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const requestId = requestContext.getStore()?.requestId;
    if (requestId) fields.request_id = requestId;
    if (context) fields.context = context;
    if (message instanceof Error) {
      this.root[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.root[level](
        { ...fields, ...message },
        typeof rest[0] === 'string' ? rest[0] : undefined,
      );
    } else {
      // Nest's own exception handler passes (message, stack).
      const stack = typeof rest[0] === 'string' && level === 'error' ? { stack: rest[0] } : {};
      this.root[level]({ ...fields, ...stack }, String(message));
    }
  }
}
