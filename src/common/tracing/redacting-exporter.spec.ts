import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { RedactingExporter } from 'src/common/tracing/redacting-exporter';

/** The spans `record` makes, as the redacting exporter hands them on. */
function exported(
  record: (span: ReturnType<ReturnType<TracerProvider['getTracer']>['startSpan']>) => void,
): ReadableSpan {
  const sink = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: new RedactingExporter(sink) })],
  });
  const span = provider.getTracer('test').startSpan('pg.query:SELECT');
  record(span);
  span.end();
  return sink.getFinishedSpans()[0];
}

const FAILED = 'invalid input syntax for type uuid: "arl_secret-token-value"';

describe('RedactingExporter', () => {
  it("sends a failed statement's status without the value its message quotes", () => {
    const span = exported((s) => s.setStatus({ code: SpanStatusCode.ERROR, message: FAILED }));
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'invalid input syntax for type uuid: "[redacted]"',
    });
    // Everything else of the span is kept.
    expect(span.name).toBe('pg.query:SELECT');
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("sends an exception event's message and stack the same way", () => {
    const error = new Error(FAILED);
    const span = exported((s) => s.recordException(error));
    const attributes = span.events[0].attributes!;
    expect(attributes['exception.message']).toBe(
      'invalid input syntax for type uuid: "[redacted]"',
    );
    expect(String(attributes['exception.stacktrace'])).not.toContain('arl_secret');
  });

  it('passes a span with nothing to redact as it is', () => {
    const span = exported((s) => s.setAttribute('db.query.text', 'SELECT 1'));
    expect(span.attributes['db.query.text']).toBe('SELECT 1');
    expect(span.status.message).toBeUndefined();
  });
});

// No global provider is registered by these tests.
afterAll(() => trace.disable());
