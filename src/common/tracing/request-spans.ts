import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpanAttribute, tracer } from 'src/common/tracing/tracer';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span while tracing is on (docs/operations.md, "Tracing"); else null. */
    traceSpan: Span | null;
  }
}

/**
 * One server span per request, named by its route template (`GET /guilds/:guild_id`), continuing
 * the caller's trace when it sends a W3C `traceparent`. Everything the request does (platform
 * calls, SQL, Redis) runs in its context and becomes its children. Registered only while tracing
 * is on: with it off, requests meet no hook of this module.
 */
export function traceRequests(fastify: FastifyInstance): void {
  fastify.decorateRequest('traceSpan', null);
  fastify.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = routeOf(request);
    const query = request.url.indexOf('?');
    const span = tracer.startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [SpanAttribute.httpRequestMethod]: request.method,
          [SpanAttribute.httpRoute]: route,
          // The path only: a query string may carry what a trace should not keep.
          [SpanAttribute.urlPath]: query === -1 ? request.url : request.url.slice(0, query),
          [SpanAttribute.clientAddress]: request.ip,
          [SpanAttribute.requestId]: request.id,
        },
      },
      parent,
    );
    request.traceSpan = span;
    context.with(trace.setSpan(parent, span), done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    endRequestSpan(request, reply.statusCode);
    done();
  });
  // A client gone before its answer: the span ends there, without a status code.
  fastify.addHook('onRequestAbort', (request, done) => {
    endRequestSpan(request, null);
    done();
  });
}

function endRequestSpan(request: FastifyRequest, status: number | null): void {
  const span = request.traceSpan;
  if (span === null) return;
  request.traceSpan = null;
  span.setAttribute(SpanAttribute.callerKind, request.session?.type ?? 'anonymous');
  const guildId = (request.params as Record<string, string | undefined> | undefined)?.guild_id;
  if (guildId !== undefined) span.setAttribute(SpanAttribute.guildId, guildId);
  if (status === null) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
  } else {
    span.setAttribute(SpanAttribute.httpResponseStatusCode, status);
    // As OpenTelemetry's HTTP conventions say for a server: 4xx is the client's, not an error here.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The route template as the metrics name it (`/guilds/:guild_id`): a slow route on the dashboard is searched for by that name in the trace store. */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}
