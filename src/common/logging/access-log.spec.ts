import { Writable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Level } from 'pino';
import { AccessLogController } from 'src/common/logging/access-log';

/** What the controller receives from Fastify when a response has been sent. */
function completed(level: Level, url: string, status: number): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level, formatters: { level: (label) => ({ level: label }) } }, sink);
  const request = { id: 'req-1', method: 'GET', url, log } as unknown as FastifyRequest;
  const reply = { statusCode: status, elapsedTime: 1.6 } as unknown as FastifyReply;
  new AccessLogController().requestCompleted(null, request, reply);
  return lines;
}

describe('AccessLogController', () => {
  it.each([
    [200, 'debug'],
    [304, 'debug'],
    [404, 'info'],
    [429, 'info'],
    [500, 'error'],
    [503, 'error'],
  ])('logs a %i answer at %s, without the query string', (status, level) => {
    expect(completed('debug', '/guilds/1?code=secret', status)).toEqual([
      expect.objectContaining({
        level,
        msg: 'request completed',
        request_id: 'req-1',
        method: 'GET',
        path: '/guilds/1',
        status,
        response_time_ms: 2,
      }),
    ]);
  });

  it('writes nothing for successes at info, the default level', () => {
    expect(completed('info', '/config', 200)).toEqual([]);
    expect(completed('info', '/config', 404)).toHaveLength(1);
  });

  it('never logs the health probes', () => {
    expect(completed('debug', '/healthz', 200)).toEqual([]);
    expect(completed('debug', '/readyz?x=1', 503)).toEqual([]);
  });

  it("keeps Fastify's own request lines off", () => {
    expect(new AccessLogController().isLogDisabled({} as FastifyRequest)).toBe(true);
  });
});
