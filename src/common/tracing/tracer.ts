import { trace, type Tracer } from '@opentelemetry/api';

/**
 * The service's own spans (requests, platform calls). Until tracing is started, and always when it
 * is off, this is OpenTelemetry's no-op tracer: a span costs one small object and records nothing.
 */
export const tracer: Tracer = trace.getTracer('bot-management-service');

/** Span attributes of the service's own (`bms.*`); the rest are OpenTelemetry's conventions. */
export const SpanAttribute = {
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
