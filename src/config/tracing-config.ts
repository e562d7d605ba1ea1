/**
 * Tracing's configuration from OpenTelemetry's standard variables (docs/operations.md, "Tracing").
 * One deliberate difference from OpenTelemetry's defaults: nothing is traced or sent unless
 * OTEL_TRACES_EXPORTER=otlp, so a service started without it pays nothing and calls nowhere.
 */

import {
  type OtlpProtocol,
  type TracesExporter,
  type TracesSampler,
  type TracingSettings,
} from 'src/common/tracing/tracing-settings';

/** `key=value` pairs separated by commas, values percent-encoded (W3C Baggage's format). */
export const OTLP_HEADERS_PATTERN = /^\s*[^\s=,]+\s*=[^,]*(,\s*[^\s=,]+\s*=[^,]*)*$/;

const DEFAULT_ENDPOINT = 'http://localhost:4318';
export const DEFAULT_SERVICE_NAME = 'bot-management-service';

/** Tracing as src/common/tracing starts it. */
export type TracingConfig = TracingSettings;

export interface TracingVariables {
  OTEL_TRACES_EXPORTER?: TracesExporter;
  OTEL_SDK_DISABLED?: boolean;
  OTEL_SERVICE_NAME?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_PROTOCOL?: OtlpProtocol;
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: OtlpProtocol;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_TRACES_SAMPLER?: TracesSampler;
  OTEL_TRACES_SAMPLER_ARG?: number;
}

export function tracingConfig(env: TracingVariables): TracingConfig {
  return {
    enabled: env.OTEL_TRACES_EXPORTER === 'otlp' && env.OTEL_SDK_DISABLED !== true,
    serviceName: env.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    protocol:
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    url:
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    samplerRatio: env.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

/** `a=1, b=x%20y` → `{ a: '1', b: 'x y' }`; the format is checked before (OTLP_HEADERS_PATTERN). */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    headers[pair.slice(0, at).trim()] = decoded(pair.slice(at + 1).trim());
  }
  return headers;
}

/** A percent-encoded value, or the value as written when it is not valid percent-encoding. */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
