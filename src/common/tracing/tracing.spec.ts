import { ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace';
import { samplerOf } from 'src/common/tracing/tracing';
import type { TracesSampler } from 'src/common/tracing/tracing-settings';
import { tracingConfig } from 'src/config/tracing-config';

/** A trace id a ratio sampler keeps at any ratio above 0 (a caller may choose it). */
const LOW_TRACE_ID = '00000000000000000000000000000001';

function parent(kind: 'none' | 'remote' | 'local', sampled: boolean): Context {
  if (kind === 'none') return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: LOW_TRACE_ID,
    spanId: '00f067aa0ba902b7',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: kind === 'remote',
  });
}

const RECORDED = SamplingDecision.RECORD_AND_SAMPLED;
const DROPPED = SamplingDecision.NOT_RECORD;

describe('samplerOf', () => {
  it.each<[TracesSampler, number, 'none' | 'remote' | 'local', boolean, SamplingDecision]>([
    // A caller's sampled flag decides nothing, whichever form is configured.
    ['parentbased_always_on', 1, 'remote', false, RECORDED],
    ['always_on', 1, 'remote', false, RECORDED],
    ['parentbased_always_off', 1, 'remote', true, DROPPED],
    ['always_off', 1, 'remote', true, DROPPED],
    // Nor does a trace id it chose: a ratio of 0 records none of its requests...
    ['parentbased_traceidratio', 0, 'remote', true, DROPPED],
    ['traceidratio', 0, 'remote', true, DROPPED],
    // ...and a ratio of 1 all of them, flag or not.
    ['parentbased_traceidratio', 1, 'remote', false, RECORDED],
    // A request of the service's own: the configured sampler.
    ['parentbased_always_on', 1, 'none', false, RECORDED],
    ['parentbased_always_off', 1, 'none', false, DROPPED],
    ['traceidratio', 0, 'none', false, DROPPED],
    ['traceidratio', 1, 'none', false, RECORDED],
    // A span inside a request follows the request: its calls and statements come with it.
    ['always_off', 1, 'local', true, RECORDED],
    ['always_on', 1, 'local', false, DROPPED],
  ])('%s (ratio %d), parent %s, sampled %s: %s', (sampler, ratio, kind, sampled, expected) => {
    const config = {
      ...tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }),
      sampler,
      samplerRatio: ratio,
    };
    const result = samplerOf(config).shouldSample(
      parent(kind, sampled),
      LOW_TRACE_ID,
      'GET /config',
      SpanKind.SERVER,
      {},
      [],
    );
    expect(result.decision).toBe(expected);
  });
});
