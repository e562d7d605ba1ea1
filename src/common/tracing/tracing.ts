import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  loggingErrorHandler,
  setGlobalErrorHandler,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { RedactingExporter } from 'src/common/tracing/redacting-exporter';
import { exportFailureHandler, logTracingOn } from 'src/common/tracing/tracing-log';
import type { TracingSettings } from 'src/common/tracing/tracing-settings';

/** Tracing once started: stopping it sends what is still buffered. */
export interface Tracing {
  /** Sends the spans still buffered, then stops; later spans are dropped. */
  shutdown(): Promise<void>;
}

/**
 * At most this many finished spans wait for export; past it, new ones are dropped (and the drop is
 * logged, as a failed export is: see `logger`), so a collector that is down costs bounded memory,
 * never the requests.
 */
const MAX_QUEUED_SPANS = 4_096;
/** A SQL statement or a Redis command longer than this is cut in its span. */
const MAX_ATTRIBUTE_LENGTH = 2_048;

/**
 * Starts OpenTelemetry tracing (docs/operations.md, "Tracing"). Called only when the configuration
 * turns it on: main.ts loads this module then, so with tracing off no SDK is loaded, no module is
 * patched and no request hook is registered (src/common/tracing/request-spans.ts), and the hot
 * path is the same as without tracing.
 *
 * It must run before `pg` and `ioredis` are first required: their instrumentations patch them as
 * they load (main.ts loads the application only after this). OpenTelemetry's own warnings and
 * errors (an export that failed, spans dropped past the queue's bound) go to `logger`, with the
 * context `OpenTelemetry`. `processor` replaces the OTLP export, for tests (an in-memory exporter
 * behind a simple processor).
 */
export function startTracing(
  config: TracingSettings,
  version: string,
  options: { logger?: Logger; processor?: SpanProcessor } = {},
): Tracing {
  const { logger, processor } = options;
  if (logger) {
    const log = logger.child({ context: 'OpenTelemetry' });
    const ignore = (): void => undefined;
    diag.setLogger(
      {
        error: (message, ...details) => log.error({ details }, message),
        warn: (message, ...details) => log.warn({ details }, message),
        info: ignore,
        debug: ignore,
        verbose: ignore,
      },
      DiagLogLevel.WARN,
    );
    // A failed export reaches this handler, not the diag logger above.
    setGlobalErrorHandler(exportFailureHandler(log, config));
    logTracingOn(log, config);
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: version,
    }),
    sampler: samplerOf(config),
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
    spanProcessors: [
      processor ??
        new BatchSpanProcessor({
          exporter: new RedactingExporter(exporterOf(config)),
          maxQueueSize: MAX_QUEUED_SPANS,
        }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Only statements and commands made for a traced request or job: the pool's own checks,
      // pub/sub pings and idle timers would otherwise each start a trace of their own. Parameter
      // values are never recorded (they hold tokens' hashes and users' settings).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // The command's name only: its keys and arguments name users, addresses and token hashes
      // (OpenTelemetry's default keeps every argument of EVAL and GET).
      new IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (command) => command,
      }),
    ],
  });
  return {
    async shutdown() {
      unregister();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
      setGlobalErrorHandler(loggingErrorHandler());
    },
  };
}

function exporterOf(config: TracingSettings): SpanExporter {
  const options = { url: config.url, headers: { ...config.headers } };
  return config.protocol === 'http/json'
    ? new OtlpJsonExporter(options)
    : new OtlpProtobufExporter(options);
}

/**
 * Which requests are recorded. A local parent's decision is always followed (a sampled request's
 * calls and statements are recorded with it). A caller's `traceparent` is continued (its trace id
 * and parent are kept) but its `sampled` flag decides nothing: any client can send one, and would
 * otherwise force its requests to be recorded on a sampling instance, or hide them from an instance
 * that records everything. For a caller's trace the ratio is drawn at random, since the caller
 * chose the trace id a ratio sampler reads. The `parentbased_` and plain forms of
 * OTEL_TRACES_SAMPLER therefore act alike here (docs/operations.md, "Tracing").
 */
export function samplerOf({ sampler, samplerRatio }: TracingSettings): Sampler {
  const decision = sampler.replace(/^parentbased_/, '');
  const own =
    decision === 'always_on'
      ? new AlwaysOnSampler()
      : decision === 'always_off'
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(samplerRatio);
  const forCallers = decision === 'traceidratio' ? new RandomRatioSampler(samplerRatio) : own;
  return new ParentBasedSampler({
    root: own,
    remoteParentSampled: forCallers,
    remoteParentNotSampled: forCallers,
  });
}

/** Records a share of spans drawn at random, whatever their trace id. */
class RandomRatioSampler implements Sampler {
  constructor(private readonly ratio: number) {}

  shouldSample(): SamplingResult {
    return {
      decision:
        Math.random() < this.ratio
          ? SamplingDecision.RECORD_AND_SAMPLED
          : SamplingDecision.NOT_RECORD,
    };
  }

  toString(): string {
    return `RandomRatioSampler{${this.ratio}}`;
  }
}
