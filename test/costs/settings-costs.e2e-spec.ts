import Redis from 'ioredis';
import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { settingsLockKey } from 'src/settings/engine/guild-settings-writers';
import { MAX_CHANGE_ENTRIES } from 'src/settings/engine/change-plan';
import { MAX_NAMED_MEMBERS } from 'src/settings/engine/settings-callers';
import { databaseOf, emulatorOf } from 'test/support/auth';
import { eventually } from 'test/support/eventually';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { actor, CHANNEL, GUILD, ok, SINK_FIELDS, type Actor } from 'test/support/demo-world';

// What one settings request may cost (docs/request-costs.md), on the embedded engine by default
// and on PostgreSQL with DATABASE_URL: platform calls, the guild's write lock, the rows read.

/** Ids no member of the demo guild has. */
const invented = (n: number, from = 0): string[] =>
  Array.from({ length: n }, (_, i) => `19${String(from + i).padStart(17, '0')}`);

/** Member lookups the emulator answered since `from`. */
function memberCalls(emulator: PlatformEmulator, from: number): number {
  return emulator.requests
    .slice(from)
    .filter((request) => request.route === 'GET /guilds/:guild_id/members/:user_id').length;
}

async function exportDocument(t: TestApp, token: string): Promise<Record<string, unknown>> {
  const res = await t
    .http()
    .get(`/guilds/${GUILD}/settings/export`)
    .set('Authorization', `Bearer ${token}`)
    .expect(200);
  return res.body as Record<string, unknown>;
}

function importRows(
  t: TestApp,
  token: string,
  document: Record<string, unknown>,
  settings: Record<string, unknown[]>,
  dryRun = true,
): Promise<Response> {
  return t
    .http()
    .post(`/guilds/${GUILD}/settings/import`)
    .set('Authorization', `Bearer ${token}`)
    .send({ dry_run: dryRun, document: { ...document, settings } });
}

const memberRows = (ids: readonly string[]): object[] =>
  ids.map((user_id) => ({ user_id, perm_overrides: ['rpc.kick'] }));

describe('request costs: platform calls a settings change may cause', () => {
  const t = useTestApp({
    env: { RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_MEMBER_LOOKUP: '40/60' },
  });
  let owner: Actor;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    document = await exportDocument(t(), owner.token);
  });

  it(`refuses an import naming more than ${MAX_NAMED_MEMBERS} members before any lookup, naming the cap`, async () => {
    const emulator = emulatorOf(t());
    const before = emulator.requests.length;
    const res = await importRows(t(), owner.token, document, {
      guildmembers: memberRows(invented(300)),
    });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toContain(
      `names 300 members; one request may name at most ${MAX_NAMED_MEMBERS}`,
    );
    expect(memberCalls(emulator, before)).toBe(0);
  });

  it('looks each named user up once, and remembers "not a member"', async () => {
    const emulator = emulatorOf(t());
    const ids = invented(MAX_NAMED_MEMBERS, 100);
    let before = emulator.requests.length;
    const first = await importRows(t(), owner.token, document, { guildmembers: memberRows(ids) });
    expect(first.status).toBe(200);
    expect(memberCalls(emulator, before)).toBe(MAX_NAMED_MEMBERS);
    before = emulator.requests.length;
    const again = await importRows(t(), owner.token, document, { guildmembers: memberRows(ids) });
    expect(again.status).toBe(200);
    expect(memberCalls(emulator, before)).toBe(0);
  });

  it('charges the lookups to the caller: past the member-lookup budget, 429 with Retry-After', async () => {
    // 25 lookups spent above; 25 more go past the budget of 40.
    const res = await importRows(t(), owner.token, document, {
      guildmembers: memberRows(invented(MAX_NAMED_MEMBERS, 200)),
    });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-bucket']).toBe('member-lookup');
  });
});

describe('request costs: database work of imports and restores', () => {
  const t = useTestApp();
  let owner: Actor;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    document = await exportDocument(t(), owner.token);
  });

  const sinks = (n: number, from = 0): object[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`,
      channel: CHANNEL.modLog,
      events: ['lockdown'],
      enabled: true,
    }));

  it(`refuses an import that would write more than ${MAX_CHANGE_ENTRIES} entries, saying how to split it`, async () => {
    const res = await importRows(t(), owner.token, document, {
      auditlog_sinks: sinks(MAX_CHANGE_ENTRIES + 1),
    });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toBe(
      `The import would write ${MAX_CHANGE_ENTRIES + 1} entries; one import writes at most ${MAX_CHANGE_ENTRIES}: import the document in parts (for example one setting at a time)`,
    );
  });

  it('answers a dry run without taking the guild lock or writing anything', async () => {
    const db = databaseOf(t());
    // On PostgreSQL another writer holds the guild's lock meanwhile; the embedded engine has one
    // connection, which a dry run needs only for its reads.
    const runner = t().database.engine === 'pglite' ? null : db.createQueryRunner();
    try {
      await runner?.connect();
      await runner?.startTransaction();
      await runner?.query('SELECT pg_advisory_xact_lock($1::bigint)', [settingsLockKey(GUILD)]);
      const res = await importRows(t(), owner.token, document, { auditlog_sinks: sinks(200) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ dry_run: true, applied: false });
      const report = res.body as { settings: { auditlog_sinks: { created: unknown[] } } };
      expect(report.settings.auditlog_sinks.created).toHaveLength(200);
    } finally {
      if (runner?.isTransactionActive) await runner.rollbackTransaction();
      await runner?.release();
    }
    const [{ n }] = await db.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM auditlog_sinks WHERE guild_id = $1',
      [GUILD],
    );
    expect(n).toBe(0);
  });

  it('refuses a write whose guild another instance keeps locked past the bound, with 429 and Retry-After', async () => {
    if (t().database.engine === 'pglite') return; // one instance, one connection: see the unit tests
    const db = databaseOf(t());
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query('SELECT pg_advisory_xact_lock($1::bigint)', [settingsLockKey(GUILD)]);
      const res = await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect((res.body as { message: string }).message).toContain(
        "Another instance is writing this guild's settings",
      );
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS));
  });
});

describe('request costs: a restore checks the caller before reading revisions', () => {
  const t = useTestApp();

  it('refuses a caller who may read the history but change nothing, whatever the trail holds', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    const created = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as { id: string };
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.bob,
        perm_overrides: ['settings_history.view'],
      }),
    );
    const db = databaseOf(t());
    const [{ last }] = await db.query<{ last: number }[]>(
      'SELECT max(revision)::int AS last FROM settings_revisions WHERE guild_id = $1',
      [GUILD],
    );
    const [{ first }] = await db.query<{ first: number }[]>(
      `SELECT min(revision)::int AS first FROM settings_revisions WHERE guild_id = $1 AND setting = 'auditlog_sinks'`,
      [GUILD],
    );
    // More later revisions than one restore reads: a check after reading them would say so instead.
    await db.query(
      `INSERT INTO settings_revisions (guild_id, revision, setting, key, operation, before, after, diff, user_id, created_at)
       SELECT $1, $2 + n, 'auditlog_sinks', $3::jsonb, 'Update', NULL, NULL, '[]'::jsonb, $4, now()
       FROM generate_series(1, 2001) AS n`,
      [GUILD, last, JSON.stringify({ id: created.id }), DEMO_IDS.alice],
    );
    const bob = await actor(t(), DEMO_IDS.bob);
    const res = await t()
      .http()
      .post(`/guilds/${GUILD}/settings/revisions/${first}/restore`)
      .set('Authorization', `Bearer ${bob.token}`);
    expect(res.status).toBe(403);
    expect((res.body as { message: string }).message).toBe(
      'Undoing changes to auditlog_sinks changes it: you need auditlog_sinks.create or auditlog_sinks.update or auditlog_sinks.delete in this guild',
    );
  });
});

describeShared('request costs: one import or restore of a guild at a time across instances', () => {
  const prefix = `bulk-${Date.now()}:`;
  const apps = useTwoInstances({ REDIS_KEY_PREFIX: prefix });
  const redis = new Redis(process.env.REDIS_URL ?? '', { lazyConnect: true });
  afterAll(() => redis.quit());

  it('refuses an import on one instance while another instance runs one, with 429 and Retry-After', async () => {
    const [a, b] = apps();
    const ownerA = await actor(a, DEMO_IDS.alice);
    const ownerB = await actor(b, DEMO_IDS.alice);
    const document = await exportDocument(a, ownerA.token);
    const sink = [{ channel: CHANNEL.modLog, events: ['lockdown'], enabled: true }];
    const runner = databaseOf(a).createQueryRunner();
    await runner.connect();
    let first: Promise<Response> | undefined;
    try {
      await runner.startTransaction();
      await runner.query('SELECT pg_advisory_xact_lock($1::bigint)', [settingsLockKey(GUILD)]);
      // Instance A's import claims the guild, then waits for the lock this test holds.
      // Sent now (a supertest request is sent when awaited).
      first = Promise.resolve(
        importRows(a, ownerA.token, document, { auditlog_sinks: sink }, false),
      );
      const claimed = await eventually(
        () => redis.exists(`${prefix}settings-bulk:${GUILD}`),
        (n) => n === 1,
      );
      expect(claimed).toBe(1);
      const res = await importRows(b, ownerB.token, document, { auditlog_sinks: sink }, false);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect((res.body as { message: string }).message).toContain(
        'An import or restore of this guild is already under way',
      );
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    expect((await first)?.status).toBe(200);
    // Released: B may import now.
    const after = await importRows(b, ownerB.token, document, { auditlog_sinks: sink });
    expect(after.status).toBe(200);
  });
});
