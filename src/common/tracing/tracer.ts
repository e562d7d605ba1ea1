import { trace, type Tracer } from '@opentelemetry/api';

/**
 * The service's own spans (requests, platform calls). Until tracing is started, and always when it
 * is off, this is OpenTelemetry's no-op tracer: a span costs one small object and records nothing.
 */
export const tracer: Tracer = trace.getTracer('bot-management-service');

/**
 * The span attributes the service sets: OpenTelemetry's semantic conventions (stable names, spelt
 * out here so that a service with tracing off does not load the conventions' package, a few
 * thousand constants) and the service's own, `bms.*`.
 */
export const SpanAttribute = {
  httpRequestMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpResponseStatusCode: 'http.response.status_code',
  urlPath: 'url.path',
  urlFull: 'url.full',
  clientAddress: 'client.address',
  callerKind: 'bms.caller.kind',
  guildId: 'bms.guild.id',
  requestId: 'bms.request.id',
  platformRoute: 'bms.platform.route',
  platformIdentity: 'bms.platform.identity',
  platformQueueWaitMs: 'bms.platform.queue_wait_ms',
  platformAttempt: 'bms.platform.attempt',
  platformAttempts: 'bms.platform.attempts',
  platformOutcome: 'bms.platform.outcome',
  platformWaitMs: 'bms.platform.wait_ms',
} as const;
