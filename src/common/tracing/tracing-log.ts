import type { Logger } from 'pino';
import type { TracingSettings } from 'src/common/tracing/tracing-settings';

/** After a failed export is logged, the next ones are counted and said at most this often. */
const REPEAT_MS = 60_000;
const ENDPOINT_VARIABLES = 'OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)';

/** Where spans go, without credentials a URL may carry (headers are never logged). */
function endpointOf(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url;
  }
}

/** The boot line that says tracing is on: exporter, endpoint, protocol and sampler. */
export function logTracingOn(log: Logger, config: TracingSettings): void {
  const endpoint = endpointOf(config.url);
  const ratio = config.sampler.endsWith('traceidratio') ? ` (ratio ${config.samplerRatio})` : '';
  log.info(
    {
      exporter: 'otlp',
      endpoint,
      protocol: config.protocol,
      sampler: config.sampler,
      samplerRatio: config.samplerRatio,
      serviceName: config.serviceName,
    },
    `Tracing is on: spans of ${config.serviceName} go to ${endpoint} (OTLP ${config.protocol}), sampler ${config.sampler}${ratio}`,
  );
}

/**
 * OpenTelemetry's handler of its own errors (a failed export, mostly), as one line that names the
 * variable to check, like the service's other start-up errors; OpenTelemetry's default writes a
 * JSON-encoded stack that names none. A collector that stays down is said again at most once a
 * minute, with how many exports failed meanwhile.
 */
export function exportFailureHandler(
  log: Logger,
  config: TracingSettings,
  now: () => number = Date.now,
): (error: unknown) => void {
  const endpoint = endpointOf(config.url);
  let lastLoggedMs = -Infinity;
  let since = 0;
  return (error) => {
    if (now() - lastLoggedMs < REPEAT_MS) {
      since += 1;
      return;
    }
    const more = since > 0 ? ` (${since} more failures since the last line)` : '';
    since = 0;
    lastLoggedMs = now();
    log.error(
      { endpoint },
      `Tracing: spans could not be sent to ${endpoint}: ${reasonOf(error)}${more}. Check ${ENDPOINT_VARIABLES} and that a collector listens there; the service runs on, and spans are dropped meanwhile`,
    );
  };
}

/** The error's own words and its cause's (Node's fetch says "fetch failed", its cause why). */
function reasonOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const code = (error as { code?: unknown }).code;
  return `${error.message || error.name}${cause}${typeof code === 'string' ? ` (${code})` : ''}`;
}
