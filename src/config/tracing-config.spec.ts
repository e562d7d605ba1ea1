import { loadConfig, type Environment } from 'src/config/app-config';
import { parseOtlpHeaders, type TracingConfig } from 'src/config/tracing-config';

const load = (env: Environment): TracingConfig =>
  loadConfig({ DATABASE_URL: 'memory://', ...env }).tracing;

function problem(env: Environment): string {
  try {
    load(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('tracing configuration (OTEL_*)', () => {
  it('is off by default, with the standard defaults ready', () => {
    expect(load({})).toEqual({
      enabled: false,
      serviceName: 'bot-management-service',
      protocol: 'http/protobuf',
      url: 'http://localhost:4318/v1/traces',
      headers: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    });
  });

  it.each<[string, Environment, Partial<TracingConfig>]>([
    ['otlp turns it on', { OTEL_TRACES_EXPORTER: 'otlp' }, { enabled: true }],
    ['none keeps it off', { OTEL_TRACES_EXPORTER: 'none' }, { enabled: false }],
    ['an empty value is unset', { OTEL_TRACES_EXPORTER: '' }, { enabled: false }],
    [
      'OTEL_SDK_DISABLED wins',
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' },
      { enabled: false },
    ],
    [
      'the endpoint gets /v1/traces, once',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318/' },
      { url: 'http://jaeger:4318/v1/traces' },
    ],
    [
      'the traces endpoint is used as given',
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/spans',
      },
      { url: 'https://collector.example/otlp/spans' },
    ],
    [
      'the traces protocol wins over the general one',
      {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      },
      { protocol: 'http/json' },
    ],
    [
      'headers are parsed and decoded',
      { OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%3D%3D, x-team = ops' },
      { headers: { 'api-key': 'abc==', 'x-team': 'ops' } },
    ],
    [
      'a ratio sampler takes its argument',
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
      { sampler: 'parentbased_traceidratio', samplerRatio: 0.25 },
    ],
    ['the service name', { OTEL_SERVICE_NAME: 'bms-eu' }, { serviceName: 'bms-eu' }],
  ])('%s', (_name, env, expected) => {
    expect(load(env)).toMatchObject(expected);
  });

  it.each<[Environment, RegExp]>([
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, /OTEL_TRACES_EXPORTER must be none or otlp/],
    [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, /OTEL_TRACES_EXPORTER must be none or otlp/],
    [{ OTEL_SDK_DISABLED: 'maybe' }, /OTEL_SDK_DISABLED must be true or false/],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(grpc is not supported/,
    ],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'json' }, /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' },
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' },
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
    ],
    [
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' },
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be/,
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'api-key' },
      /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/,
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'a=1,,b=2' },
      /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/,
    ],
    [
      { OTEL_TRACES_SAMPLER: 'sometimes' },
      /OTEL_TRACES_SAMPLER must be one of always_on, always_off/,
    ],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
    [{ OTEL_TRACES_SAMPLER_ARG: '-0.1' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
    [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
  ])('refuses %j at boot, saying what is right', (env, message) => {
    expect(problem(env)).toMatch(message);
  });

  it('keeps a header value it cannot decode as written', () => {
    expect(parseOtlpHeaders('key=100%')).toEqual({ key: '100%' });
  });
});
