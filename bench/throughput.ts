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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Each round's figure, rounded, for the results table. */
export function rounds(values: number[]): string {
  return values.map((v) => Math.round(v)).join(', ');
}
