import type { BenchPlatform } from './bench-platform';
import { prepareGuildRoles, BENCH_SETTINGS } from './scenarios';

/** One request of the soak mix, as autocannon sends it. */
export interface SoakRequest {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The shard report the soak's writer sends (an upsert: the table stays one row per shard). */
const SHARD_REPORT = {
  status: 'Ready',
  real_latency: 40,
  guilds: 1000,
  users: 50_000,
  uptime: 600,
  total_uptime: 6000,
};

/**
 * The soak's mixed traffic, each connection cycling through it: reads served from caches
 * (sessions, settings, the user's guild list, bot stats, config) and a shard report written
 * to the database. Needs the service started with `ROOT_USERS` naming the demo user.
 */
export async function prepareSoakMix(
  baseUrl: string,
  platform: BenchPlatform,
): Promise<SoakRequest[]> {
  const settingsHeaders = await prepareGuildRoles(baseUrl, platform);
  const login = await platform.loginToken(baseUrl);
  const user = { Authorization: `Bearer ${login}` };
  const apiToken = await fetch(`${baseUrl}/sessions`, {
    method: 'POST',
    headers: { ...user, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'soak shard reporter', type: 'api', expiry: 86_400 }),
  });
  if (!apiToken.ok) throw new Error(`creating the soak API token: ${apiToken.status}`);
  const { token } = (await apiToken.json()) as { token: string };
  return [
    { method: 'GET', path: '/sessions/@me', headers: user },
    {
      method: 'POST',
      path: BENCH_SETTINGS,
      headers: settingsHeaders,
      body: JSON.stringify({ setting: 'guildroles', operation: 'View', fields: {} }),
    },
    { method: 'GET', path: '/users/@me/guilds', headers: user },
    { method: 'GET', path: '/bot-stats', headers: {} },
    {
      method: 'PUT',
      path: '/internal/shards/0',
      headers: { Authorization: token, 'Content-Type': 'application/json' },
      body: JSON.stringify(SHARD_REPORT),
    },
    { method: 'GET', path: '/config', headers: {} },
  ];
}
