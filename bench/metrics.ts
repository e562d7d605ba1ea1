import { sideBySide, type LoadOptions } from './side-by-side';
import { requestsPerSecond, type Scenario } from './throughput';
import { unusedPort } from 'test/support/ports';

/**
 * `npm run bench:metrics`: what collecting metrics costs on the hot path (bench/side-by-side.ts):
 * the service with METRICS_PORT unset, and with it set and scraped every second, as Prometheus
 * would. Writes bench/metrics-results.md.
 */
const TOKEN = 'bench-metrics-token-'.repeat(2);

async function main(): Promise<void> {
  const metricsPort = await unusedPort();
  await sideBySide({
    title: 'Metrics: cost on the hot path',
    file: 'metrics-results.md',
    describe: ({ rounds, durationS, connections }) =>
      `the built service twice (embedded default, live mode), METRICS_PORT unset and set (scraped every second), ${rounds} alternating rounds of ${durationS} s at ${connections} connections; medians.`,
    baseline: { label: 'metrics off', env: {} },
    variant: {
      label: 'metrics on',
      env: { METRICS_PORT: String(metricsPort), METRICS_TOKEN: TOKEN },
      measure: (baseUrl, scenario, options) =>
        measureWhileScraped(baseUrl, scenario, options, metricsPort),
    },
  });
}

/** Measures while a scraper reads /metrics every second, as Prometheus would. */
async function measureWhileScraped(
  baseUrl: string,
  scenario: Scenario,
  options: LoadOptions,
  metricsPort: number,
): Promise<number> {
  const scrape = async (): Promise<void> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    if (!res.ok) throw new Error(`scrape: ${res.status}`);
    await res.text();
  };
  await scrape();
  const timer = setInterval(() => void scrape().catch(() => undefined), 1000);
  try {
    return await requestsPerSecond(baseUrl, scenario, options);
  } finally {
    clearInterval(timer);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
