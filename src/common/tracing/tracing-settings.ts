/**
 * What tracing is started with (docs/operations.md, "Tracing"). src/config builds it from
 * OpenTelemetry's standard variables; the names below are theirs.
 */

export const TRACES_EXPORTERS = ['none', 'otlp'] as const;
export type TracesExporter = (typeof TRACES_EXPORTERS)[number];

/** OTLP over HTTP; gRPC would bring a second HTTP/2 stack for what the collector's 4318 takes. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

export interface TracingSettings {
  /** OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true. */
  readonly enabled: boolean;
  /** OTEL_SERVICE_NAME: the `service.name` every span carries. */
  readonly serviceName: string;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. */
  readonly protocol: OtlpProtocol;
  /**
   * Where spans are sent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
   * OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) with `/v1/traces` appended.
   */
  readonly url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS: sent with every export (a vendor's key, say). */
  readonly headers: Readonly<Record<string, string>>;
  /** OTEL_TRACES_SAMPLER, default parentbased_always_on: a caller's sampled trace continues. */
  readonly sampler: TracesSampler;
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers, default 1. */
  readonly samplerRatio: number;
}
