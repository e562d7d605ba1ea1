import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';
import { redactQuotedValues } from 'src/common/logging/error-serializer';

/** The event attributes that carry an error's text (OpenTelemetry's exception event). */
const ERROR_TEXT_ATTRIBUTES = ['exception.message', 'exception.stacktrace'];

/**
 * Sends spans without the values that error texts quote, as the log writes them
 * (src/common/logging/error-serializer.ts): the PostgreSQL and Redis instrumentations put a failed
 * statement's error message in the span's status and exception event as it is, and such a message
 * may quote what a client sent.
 */
export class RedactingExporter implements SpanExporter {
  constructor(private readonly exporter: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exporter.export(spans.map(redacted), done);
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }
}

function redacted(span: ReadableSpan): ReadableSpan {
  const message = span.status.message;
  const events = span.events.some(hasErrorText);
  if (message === undefined && !events) return span;
  // The span as it is (its methods included), with only these two fields replaced.
  return Object.create(span, {
    status: {
      value:
        message === undefined
          ? span.status
          : { ...span.status, message: redactQuotedValues(message) },
    },
    events: { value: events ? span.events.map(redactedEvent) : span.events },
  }) as ReadableSpan;
}

function hasErrorText(event: TimedEvent): boolean {
  return ERROR_TEXT_ATTRIBUTES.some((key) => typeof event.attributes?.[key] === 'string');
}

function redactedEvent(event: TimedEvent): TimedEvent {
  if (!hasErrorText(event)) return event;
  const attributes = { ...event.attributes };
  for (const key of ERROR_TEXT_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string') attributes[key] = redactQuotedValues(value);
  }
  return { ...event, attributes };
}
