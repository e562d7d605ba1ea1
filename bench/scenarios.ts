import { BENCH_IDS, BENCH_ROLE_IDS, type BenchPlatform } from './bench-platform';

/** A benchmarked route: how to prepare it against a running service, and what to request. */
export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** The JSON body of every request (POST scenarios). */
  body?: string;
  /** Runs once against the service before measuring; returns the request headers to use. */
  prepare(baseUrl: string, platform: BenchPlatform): Promise<Record<string, string>>;
  /** The throughput to reach, as a share of one baseline's in the same run. */
  target: { baseline: 'minimal Nest' | 'bare'; ratio: number };
}

export const BENCH_SETTINGS = `/guilds/${BENCH_IDS.guild}/settings`;

/**
 * The bench guild's owner gives each of its 100 roles a `guildroles` entry; the member holds 10 of
 * those roles, and so reads the entries through permissions resolved from 10 roles.
 */
export async function prepareGuildRoles(
  baseUrl: string,
  platform: BenchPlatform,
): Promise<Record<string, string>> {
  const owner = await platform.loginToken(baseUrl, BENCH_IDS.owner);
  const exec = (operation: string, fields: object): Promise<Response> =>
    fetch(baseUrl + BENCH_SETTINGS, {
      method: 'POST',
      headers: { Authorization: owner, 'Content-Type': 'application/json' },
      body: JSON.stringify({ setting: 'guildroles', operation, fields }),
    });
  // Another scenario may have created them already on this service.
  const view = await exec('View', { limit: 100 });
  if (!view.ok) throw new Error(`reading guildroles: ${view.status} ${await view.text()}`);
  const existing = (await view.json()) as { data: unknown[] };
  if (existing.data.length === 0) {
    for (const [i, roleId] of BENCH_ROLE_IDS.entries()) {
      const res = await exec('Create', {
        role_id: roleId,
        perms: ['guildroles.view', `rpc.role${i}`, '~rpc.ban'],
        index: i + 1,
      });
      if (!res.ok) throw new Error(`creating entry ${roleId}: ${res.status} ${await res.text()}`);
    }
  }
  return {
    Authorization: `Bearer ${await platform.loginToken(baseUrl, BENCH_IDS.member)}`,
    'Content-Type': 'application/json',
  };
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'GET /sessions/@me (valid token)',
    method: 'GET',
    path: '/sessions/@me',
    target: { baseline: 'minimal Nest', ratio: 0.65 },
    prepare: async (baseUrl, platform) => ({
      Authorization: `Bearer ${await platform.loginToken(baseUrl)}`,
    }),
  },
  {
    name: 'POST …/settings View guildroles (100 entries, 10 roles)',
    method: 'POST',
    path: BENCH_SETTINGS,
    body: JSON.stringify({ setting: 'guildroles', operation: 'View', fields: {} }),
    target: { baseline: 'bare', ratio: 0.3 },
    prepare: prepareGuildRoles,
  },
  {
    name: 'GET /config',
    method: 'GET',
    path: '/config',
    target: { baseline: 'minimal Nest', ratio: 0.85 },
    prepare: () => Promise.resolve({}),
  },
];

/** `BENCH_SCENARIOS=config,@me` measures only the scenarios whose name contains one of the words. */
export function selectedScenarios(): Scenario[] {
  const words = (process.env.BENCH_SCENARIOS ?? '').split(',').filter(Boolean);
  return words.length === 0
    ? SCENARIOS
    : SCENARIOS.filter((scenario) => words.some((word) => scenario.name.includes(word)));
}
