import { Writable } from 'node:stream';
import pino from 'pino';
import { exportFailureHandler, logTracingOn } from 'src/common/tracing/tracing-log';
import { tracingConfig } from 'src/config/tracing-config';

/** A pino logger whose lines are kept, parsed. */
function capture(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino(stream), lines };
}

describe('tracing logs', () => {
  it('says at boot that tracing is on: exporter, endpoint, protocol, sampler', () => {
    const { log, lines } = capture();
    const config = tracingConfig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:secret@collector:4318/',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: 0.25,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=hidden',
    });
    logTracingOn(log, config);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        exporter: 'otlp',
        endpoint: 'http://collector:4318/v1/traces',
        protocol: 'http/protobuf',
        sampler: 'parentbased_traceidratio',
        samplerRatio: 0.25,
        msg: 'Tracing is on: spans of bot-management-service go to http://collector:4318/v1/traces (OTLP http/protobuf), sampler parentbased_traceidratio (ratio 0.25)',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/secret|hidden/);
  });

  it('says a failed export in one line naming the variable, then at most once a minute', () => {
    const { log, lines } = capture();
    let now = 0;
    const config = tracingConfig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    });
    const failed = exportFailureHandler(log, config, () => now);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
      code: 'ECONNREFUSED',
    });
    failed(refused);
    now = 30_000;
    failed(refused);
    failed(refused);
    now = 61_000;
    failed(new Error('Request Timeout'));
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [
        50,
        'Tracing: spans could not be sent to http://127.0.0.1:9/v1/traces: connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED). Check OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and that a collector listens there; the service runs on, and spans are dropped meanwhile',
      ],
      [
        50,
        'Tracing: spans could not be sent to http://127.0.0.1:9/v1/traces: Request Timeout (2 more failures since the last line). Check OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and that a collector listens there; the service runs on, and spans are dropped meanwhile',
      ],
    ]);
  });
});
