import autocannon from 'autocannon';

/** One measured request: its name in the results, its path and headers. */
export interface Scenario {
  name: string;
  path: string;
  headers: Record<string, string>;
}

/** The average req/s of one autocannon run; any non-2xx answer or error fails the bench. */
export async function requestsPerSecond(
  baseUrl: string,
  scenario: Scenario,
  options: { connections: number; durationS: number },
): Promise<number> {
  const result = await autocannon({
    url: baseUrl + scenario.path,
    headers: scenario.headers,
    connections: options.connections,
    duration: options.durationS,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return result.requests.average;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Each round's figure, rounded, for the results table. */
function rounds(values: number[]): string {
  return values.map((v) => Math.round(v)).join(', ');
}

/** The figures of a baseline and a variant, measured in alternating rounds. */
export interface Comparison {
  /** Median of the variant ÷ median of the baseline. */
  ratio: number;
  /** The results table's row: scenario, both medians, the ratio and every round's figure. */
  row: string;
}

/**
 * Measures `baseline` and `variant` `times` times each, which goes first alternating from round to
 * round so that neither gains from its place (drift of the machine hits both alike).
 */
export async function compareAlternating(
  name: string,
  times: number,
  baseline: () => Promise<number>,
  variant: () => Promise<number>,
): Promise<Comparison> {
  const figures = { baseline: [] as number[], variant: [] as number[] };
  const measureBaseline = async (): Promise<void> => void figures.baseline.push(await baseline());
  const measureVariant = async (): Promise<void> => void figures.variant.push(await variant());
  for (let round = 0; round < times; round++) {
    const order =
      round % 2 === 0 ? [measureBaseline, measureVariant] : [measureVariant, measureBaseline];
    for (const measure of order) await measure();
  }
  const a = median(figures.baseline);
  const b = median(figures.variant);
  const ratio = b / a;
  return {
    ratio,
    row: `| ${name} | ${Math.round(a)} | ${Math.round(b)} | ${ratio.toFixed(3)} | ${rounds(figures.baseline)} | ${rounds(figures.variant)} |`,
  };
}
