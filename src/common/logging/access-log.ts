import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Fastify's per-request log lines, replaced by one access line per request. Fastify calls
 * `requestCompleted` from the response's own `finish` listener, which it attaches anyway, so the
 * line costs no `onResponse` hook on every request. Fastify's other request lines stay off: errors
 * are logged where they are rendered.
 */
export class AccessLogController extends LogController {
  constructor() {
    super({ disableRequestLogging: true });
  }

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    logCompletedRequest(request, reply);
  }
}

/**
 * At `debug` for successes (an access log costs a third of the throughput; load balancers keep
 * one), at `info` for 4xx and `error` for 5xx. Probes are not logged, and the query string never
 * is: it can carry codes or ids.
 */
function logCompletedRequest(request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode;
  const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
  const log = request.log as Logger;
  if (!log.isLevelEnabled(level)) return;
  const path = request.url.split('?')[0];
  if (PROBE_PATHS.has(path)) return;
  log[level](
    {
      request_id: request.id,
      method: request.method,
      path,
      status,
      response_time_ms: Math.round(reply.elapsedTime),
    },
    'request completed',
  );
}
