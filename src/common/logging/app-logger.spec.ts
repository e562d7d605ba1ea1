import { Writable } from 'node:stream';
import { AppLogger, createRootLogger, endLogs } from 'src/common/logging/app-logger';

/** An AppLogger at `level` and the JSON lines it wrote. */
function capture(level: 'info' | 'debug'): { logger: AppLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: new AppLogger(createRootLogger(level, sink)), lines };
}

describe('AppLogger', () => {
  it("writes Nest's (message, context) lines with the context", () => {
    const { logger, lines } = capture('info');
    logger.log('ConfigModule dependencies initialized', 'InstanceLoader');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        context: 'InstanceLoader',
        msg: 'ConfigModule dependencies initialized',
      }),
    ]);
  });

  // main.ts writes the one line that explains a failed boot; Nest's own report of the error it
  // throws is detail.
  it.each([
    ['ExceptionHandler', new Error('connect ECONNREFUSED 127.0.0.1:5432')],
    ['NestApplication', 'Error: listen EADDRINUSE: address already in use 127.0.0.1:3000'],
  ])("keeps Nest's report from %s for debugging only", (context, error) => {
    const atInfo = capture('info');
    atInfo.logger.error(error, context);
    expect(atInfo.lines).toEqual([]);
    const atDebug = capture('debug');
    atDebug.logger.error(error, context);
    expect(atDebug.lines).toEqual([expect.objectContaining({ level: 'debug', context })]);
  });

  it('writes every other error line as an error', () => {
    const { logger, lines } = capture('info');
    logger.error('Unable to reach Redis', 'RedisConnection');
    logger.warn('slow', 'NestApplication');
    expect(lines.map((line) => [line.level, line.context])).toEqual([
      ['error', 'RedisConnection'],
      ['warn', 'NestApplication'],
    ]);
  });
});

describe('endLogs', () => {
  it('ends the output of the root and of every child of it, whatever level the child has', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const root = createRootLogger('info', sink);
    // As Fastify makes its logger from the one it is handed.
    const child = root.child({}, { level: 'info' });
    root.fatal('The service could not start');
    endLogs(root);
    child.info('Server listening');
    child.fatal('after the end');
    root.info('after the end');
    new AppLogger(root).log('after the end', 'InstanceLoader');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'fatal', msg: 'The service could not start' }),
    ]);
  });
});
