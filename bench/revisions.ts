import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { BENCH_IDS, BenchPlatform } from './bench-platform';
import { BENCH_ADMIN_URL, freshPostgresDatabase } from './database';
import { BENCH_SETTINGS } from './scenarios';
import { ROOT, startServiceProcess, stopServiceProcess } from './service-process';

/**
 * `npm run bench:revisions`: a guild with 100,000 settings revisions on PostgreSQL, and the time
 * `GET /guilds/{guild_id}/settings/revisions` takes to answer a page for each filter, over HTTP
 * from the built service (sequential requests, so each figure is one request's latency). The
 * target is under 50 ms. Writes bench/revisions-results.md.
 */
const REVISIONS = Number(process.env.BENCH_REVISIONS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REVISION_REQUESTS ?? 200);
const TARGET_MS = 50;
const SETTINGS = ['guildroles', 'guildmembers', 'auditlog_sinks', 'commands', 'protection'];
const AUTHORS = 50;
const KEYS = 1000;

interface Case {
  name: string;
  query: Record<string, string>;
}

interface Timed extends Case {
  returned: number;
  p50: number;
  p99: number;
  max: number;
}

async function main(): Promise<void> {
  const database = await freshPostgresDatabase('bms_revisions');
  if (!database) {
    console.log(`PostgreSQL not reachable at ${BENCH_ADMIN_URL}: nothing measured`);
    return;
  }
  const platform = await BenchPlatform.start();
  try {
    const service = await startServiceProcess({
      DATABASE_URL: database.url,
      TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
      ...platform.serviceEnv(),
    });
    try {
      const token = await platform.loginToken(service.baseUrl, BENCH_IDS.owner);
      const cases = await seed(service.baseUrl, token, database.url);
      const timed: Timed[] = [];
      for (const entry of cases) timed.push(await measure(service.baseUrl, token, entry));
      report(timed);
    } finally {
      await stopServiceProcess(service.process);
    }
  } finally {
    await platform.close();
    await database.drop();
  }
}

/**
 * One real change through the API (so the trail's newest revision is the engine's own), then the
 * rest written directly: settings, entries, authors, operations and times spread as a busy guild's
 * would be, 100 days of changes.
 */
async function seed(baseUrl: string, token: string, url: string): Promise<Case[]> {
  const res = await fetch(baseUrl + BENCH_SETTINGS, {
    method: 'POST',
    headers: { Authorization: token, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      setting: 'protection',
      operation: 'Create',
      fields: { id: 'default', hoist_detection: 1, fake_bot_detection: 0 },
    }),
  });
  if (!res.ok) throw new Error(`seeding: ${res.status} ${await res.text()}`);
  const client = new Client({ connectionString: url });
  await client.connect();
  const started = performance.now();
  await client.query(
    `INSERT INTO settings_revisions
       (guild_id, revision, setting, key, operation, before, after, diff, user_id, session_id,
        session_type, created_at)
     SELECT $1, n + 1,
       ($2::text[])[1 + n % $3],
       jsonb_build_object('id', 'entry-' || (n % $4)),
       (ARRAY['Create', 'Update', 'Update', 'Delete'])[1 + n % 4],
       jsonb_build_object('id', 'entry-' || (n % $4), 'value', n - 1),
       jsonb_build_object('id', 'entry-' || (n % $4), 'value', n),
       jsonb_build_object('value', jsonb_build_object('before', n - 1, 'after', n)),
       (1100000000000000000 + n % $5)::text, NULL, 'api',
       now() - interval '100 days' + (n * interval '100 days' / $6)
     FROM generate_series(1, $6) AS n`,
    [BENCH_IDS.guild, SETTINGS, SETTINGS.length, KEYS, AUTHORS, REVISIONS - 1],
  );
  await client.query('ANALYZE settings_revisions');
  await client.end();
  console.log(`${REVISIONS} revisions written in ${Math.round(performance.now() - started)} ms`);
  const middle = Math.floor(REVISIONS / 2);
  return [
    { name: 'newest page, no filter', query: {} },
    { name: 'one setting', query: { setting: 'guildroles' } },
    { name: 'one entry', query: { setting: 'commands', key: '{"id":"entry-3"}' } },
    { name: 'one author', query: { author: '1100000000000000007' } },
    { name: 'one operation', query: { operation: 'Delete' } },
    {
      name: 'a day, 50 days ago',
      query: {
        since: new Date(Date.now() - 50 * 86_400_000).toISOString(),
        until: new Date(Date.now() - 49 * 86_400_000).toISOString(),
      },
    },
    { name: 'a page half-way down (cursor)', query: { cursor: String(middle) } },
    {
      name: 'setting + author + operation, deep',
      query: {
        setting: 'guildroles',
        author: '1100000000000000010',
        operation: 'Update',
        cursor: String(middle),
      },
    },
  ];
}

async function measure(baseUrl: string, token: string, entry: Case): Promise<Timed> {
  const url = `${baseUrl}/guilds/${BENCH_IDS.guild}/settings/revisions?${new URLSearchParams({
    limit: '50',
    ...entry.query,
  }).toString()}`;
  const times: number[] = [];
  let returned = 0;
  for (let i = 0; i < REQUESTS + 10; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { Authorization: token } });
    const body = (await res.json()) as { revisions?: unknown[] };
    const ms = performance.now() - started;
    if (!res.ok) throw new Error(`${entry.name}: ${res.status} ${JSON.stringify(body)}`);
    returned = body.revisions?.length ?? 0;
    // The first requests warm the connection pool and the plan cache.
    if (i >= 10) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const at = (share: number): number =>
    Math.round(times[Math.min(times.length - 1, Math.floor(times.length * share))] * 10) / 10;
  const timed = { ...entry, returned, p50: at(0.5), p99: at(0.99), max: at(1) };
  console.log(
    `${entry.name}: ${returned} revisions, p50 ${timed.p50} ms, p99 ${timed.p99} ms, max ${timed.max} ms`,
  );
  return timed;
}

function queryText(query: Record<string, string>): string {
  const text = Object.entries(query)
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  return text ? `\`${text}\`` : '–';
}

function report(timed: Timed[]): void {
  const rows = timed.map(
    (t) =>
      `| ${t.name} | ${queryText(t.query)} | ${t.returned} | ${t.p50} | ${t.p99} | ${t.max} | ${t.p99 < TARGET_MS ? '✓' : '✗'} |`,
  );
  const markdown = [
    '# Settings revisions: query latency',
    '',
    `\`npm run bench:revisions\`, ${new Date().toISOString()}: one guild with ${REVISIONS.toLocaleString('en')} revisions on PostgreSQL (${SETTINGS.length} settings, ${KEYS} entries, ${AUTHORS} authors, 100 days), pages of 50 over HTTP from the built service, ${REQUESTS} sequential requests per filter. Target: under ${TARGET_MS} ms.`,
    '',
    '| filter | query | revisions | p50 ms | p99 ms | max ms | p99 < 50 ms |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(join(ROOT, 'bench', 'revisions-results.md'), markdown);
  console.log(`\n${markdown}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
