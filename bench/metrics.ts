import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchPlatform } from './bench-platform';
import { compareAlternating, requestsPerSecond, type Scenario } from './throughput';
import { unusedPort } from 'test/support/ports';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/**
 * `npm run bench:metrics`: what collecting metrics costs on the hot path. Two copies of the built
 * service (embedded default, live mode against the bench's platform) run side by side, one with
 * METRICS_PORT set and one without, and each scenario is measured on both in alternating rounds
 * (each first in every other round, so drift of the machine hits both alike), with a scrape of /metrics every second on the one
 * that collects. Reports the median req/s of each and their ratio. Writes bench/metrics-results.md.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
const CONNECTIONS = 50;
const TOKEN = 'bench-metrics-token-'.repeat(2);

async function main(): Promise<void> {
  const platform = await BenchPlatform.start();
  const metricsPort = await unusedPort();
  const services: ServiceProcess[] = [];
  try {
    const off = await startServiceProcess({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'bms-metrics-off-')),
      ...platform.serviceEnv(),
    });
    services.push(off);
    const on = await startServiceProcess({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'bms-metrics-on-')),
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN: TOKEN,
      ...platform.serviceEnv(),
    });
    services.push(on);
    const scenarios = async (baseUrl: string): Promise<Scenario[]> => [
      { name: 'GET /config', path: '/config', headers: {} },
      {
        name: 'GET /sessions/@me',
        path: '/sessions/@me',
        headers: { Authorization: `Bearer ${await platform.loginToken(baseUrl)}` },
      },
    ];
    const offScenarios = await scenarios(off.baseUrl);
    const onScenarios = await scenarios(on.baseUrl);
    const rows: string[] = [];
    const options = { connections: CONNECTIONS, durationS: DURATION_S };
    for (const [i, scenario] of offScenarios.entries()) {
      const comparison = await compareAlternating(
        scenario.name,
        ROUNDS,
        () => requestsPerSecond(off.baseUrl, scenario, options),
        () => measureWhileScraped(on.baseUrl, onScenarios[i], metricsPort),
      );
      console.log(`${scenario.name}: metrics on ÷ off ${comparison.ratio.toFixed(3)}`);
      rows.push(comparison.row);
    }
    const markdown = [
      '# Metrics: cost on the hot path',
      '',
      `\`npm run bench:metrics\`, ${new Date().toISOString()}: the built service twice (embedded default, live mode), METRICS_PORT unset and set (scraped every second), ${ROUNDS} alternating rounds of ${DURATION_S} s at ${CONNECTIONS} connections; medians.`,
      '',
      '| scenario | metrics off req/s | metrics on req/s | on ÷ off | rounds off | rounds on |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'bench', 'metrics-results.md'), markdown);
    console.log(`\n${markdown}`);
  } finally {
    for (const service of services) await stopServiceProcess(service.process);
    await platform.close();
  }
}

/** Measures while a scraper reads /metrics every second, as Prometheus would. */
async function measureWhileScraped(
  baseUrl: string,
  scenario: Scenario,
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
    return await requestsPerSecond(baseUrl, scenario, {
      connections: CONNECTIONS,
      durationS: DURATION_S,
    });
  } finally {
    clearInterval(timer);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
