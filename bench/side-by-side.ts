import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchPlatform } from './bench-platform';
import { compareAlternating, requestsPerSecond, type Scenario } from './throughput';
import {
  ROOT,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from './service-process';

/** One copy of the service in a side-by-side comparison. */
export interface Variant {
  /** As the results table names it: `metrics on`, `tracing off`. */
  label: string;
  /** Its environment beyond the bench platform's and a data directory of its own. */
  env: Record<string, string>;
  /** How a round is measured on it; by default plain load (autocannon). */
  measure?(baseUrl: string, scenario: Scenario, options: LoadOptions): Promise<number>;
}

export interface LoadOptions {
  connections: number;
  durationS: number;
}

export interface SideBySideOptions {
  /** The results file's heading, and its name under bench/ (`metrics-results.md`). */
  title: string;
  file: string;
  /** What was run, for the results file, after the command and the date. */
  describe(run: { rounds: number; durationS: number; connections: number }): string;
  baseline: Variant;
  variant: Variant;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
const CONNECTIONS = 50;

/**
 * What a feature costs on the hot path: two copies of the built service (embedded default, live
 * mode against the bench's platform) run side by side, and GET /config and GET /sessions/@me are
 * measured on both in alternating rounds (each first in every other round, so drift of the machine
 * hits both alike). Prints and writes the median req/s of each and their ratio.
 */
export async function sideBySide(options: SideBySideOptions): Promise<void> {
  const platform = await BenchPlatform.start();
  const services: ServiceProcess[] = [];
  try {
    const start = async (variant: Variant): Promise<ServiceProcess> => {
      const service = await startServiceProcess({
        DATA_DIR: mkdtempSync(join(tmpdir(), 'bms-side-by-side-')),
        ...variant.env,
        ...platform.serviceEnv(),
      });
      services.push(service);
      return service;
    };
    const baseline = await start(options.baseline);
    const variant = await start(options.variant);
    const scenarios = async (baseUrl: string): Promise<Scenario[]> => [
      { name: 'GET /config', path: '/config', headers: {} },
      {
        name: 'GET /sessions/@me',
        path: '/sessions/@me',
        headers: { Authorization: `Bearer ${await platform.loginToken(baseUrl)}` },
      },
    ];
    const baselineScenarios = await scenarios(baseline.baseUrl);
    const variantScenarios = await scenarios(variant.baseUrl);
    const load = { connections: CONNECTIONS, durationS: DURATION_S };
    const measure = (which: Variant, baseUrl: string, scenario: Scenario): Promise<number> =>
      (which.measure ?? requestsPerSecond)(baseUrl, scenario, load);
    const rows: string[] = [];
    for (const [i, scenario] of baselineScenarios.entries()) {
      const comparison = await compareAlternating(
        scenario.name,
        ROUNDS,
        () => measure(options.baseline, baseline.baseUrl, scenario),
        () => measure(options.variant, variant.baseUrl, variantScenarios[i]),
      );
      console.log(
        `${scenario.name}: ${options.variant.label} ÷ ${options.baseline.label} ${comparison.ratio.toFixed(3)}`,
      );
      rows.push(comparison.row);
    }
    const { baseline: a, variant: b } = options;
    const markdown = [
      `# ${options.title}`,
      '',
      `\`npm run bench:${options.file.replace('-results.md', '')}\`, ${new Date().toISOString()}: ${options.describe({ rounds: ROUNDS, durationS: DURATION_S, connections: CONNECTIONS })}`,
      '',
      `| scenario | ${a.label} req/s | ${b.label} req/s | ${b.label} ÷ ${a.label} | rounds, ${a.label} | rounds, ${b.label} |`,
      '|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'bench', options.file), markdown);
    console.log(`\n${markdown}`);
  } finally {
    for (const service of services) await stopServiceProcess(service.process);
    await platform.close();
  }
}
