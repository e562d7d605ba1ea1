import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, emulatorOf, loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE, type Actor } from 'test/support/demo-world';

// Every test here runs on the embedded engine by default and on PostgreSQL with DATABASE_URL.

type Row = Record<string, unknown>;
interface Revision {
  revision: number;
  setting: string;
  key: Row | null;
  operation: string;
  before: Row | null;
  after: Row | null;
  diff: Record<string, { before: unknown; after: unknown }> | null;
  user_id: string;
  session_id: string | null;
  session_type: string | null;
  reverts: number | null;
  created_at: string;
}
interface Page {
  revisions: Revision[];
  next_cursor: string | null;
}

describe('settings revisions', () => {
  const t = useTestApp();
  let owner: Actor;
  let ownerSession: string;

  const revisions = (token: string, query: Record<string, string> = {}): Promise<Response> =>
    t()
      .http()
      .get(`/guilds/${GUILD}/settings/revisions`)
      .query(query)
      .set('Authorization', `Bearer ${token}`);
  const page = async (query: Record<string, string> = {}): Promise<Page> => {
    const res = await revisions(owner.token, query);
    expect(res.status).toBe(200);
    return res.body as Page;
  };

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    ownerSession = (
      await t().http().get('/sessions/@me').set('Authorization', `Bearer ${owner.token}`)
    ).body.id as string;
  });

  it('records one revision per entry changed, numbered per guild, with its author, session and diff', async () => {
    const start = (await page({ limit: '1' })).revisions[0]?.revision ?? 0;
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.vip,
        perms: ['rpc.view'],
        index: 7,
      }),
    );
    ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.eventHost, perms: [], index: 8 }));
    ok(
      await owner.exec('guildroles', 'Update', {
        role_id: ROLE.vip,
        perms: ['rpc.view', 'rpc.kick'],
      }),
    );
    ok(
      await owner.exec('guildroles', 'Reorder', [
        { role_id: ROLE.vip, index: 8 },
        { role_id: ROLE.eventHost, index: 7 },
      ]),
    );
    ok(await owner.exec('guildroles', 'Delete', { role_id: ROLE.eventHost }));

    const { revisions: trail } = await page({ setting: 'guildroles', limit: '6' });
    expect(trail.map((r) => [r.revision - start, r.operation, r.key])).toEqual([
      [6, 'Delete', { role_id: ROLE.eventHost }],
      [5, 'Reorder', { role_id: ROLE.eventHost }],
      [4, 'Reorder', { role_id: ROLE.vip }],
      [3, 'Update', { role_id: ROLE.vip }],
      [2, 'Create', { role_id: ROLE.eventHost }],
      [1, 'Create', { role_id: ROLE.vip }],
    ]);
    for (const revision of trail) {
      expect(revision).toMatchObject({
        setting: 'guildroles',
        user_id: DEMO_IDS.alice,
        session_id: ownerSession,
        session_type: 'login',
        reverts: null,
      });
    }
    const update = trail[3];
    expect(update.diff).toEqual({
      perms: { before: ['rpc.view'], after: ['rpc.view', 'rpc.kick'] },
      version: { before: 1, after: 2 },
      last_updated_at: { before: expect.any(String), after: expect.any(String) },
    });
    expect(update.before).toMatchObject({ perms: ['rpc.view'], version: 1 });
    expect(update.after).toMatchObject({ perms: ['rpc.view', 'rpc.kick'], version: 2 });
    expect(trail[0]).toMatchObject({ after: null, before: { role_id: ROLE.eventHost } });
    expect(trail[5]).toMatchObject({ before: null, after: { role_id: ROLE.vip, version: 1 } });

    // What was stored, and the history View reading the same trail.
    const [stored] = await databaseOf(t()).query<Row[]>(
      'SELECT count(*)::int AS n, max(revision) AS last FROM settings_revisions WHERE guild_id = $1',
      [GUILD],
    );
    expect(stored).toEqual({ n: start + 6, last: start + 6 });
    const history = ok(
      await owner.exec('settings_history', 'View', { setting: 'guildroles', limit: 2 }),
    ) as Row[];
    expect(history.map((h) => [h.revision, h.operation])).toEqual([
      [start + 6, 'Delete'],
      [start + 5, 'Reorder'],
    ]);
  });

  it('names the API token a change was made with', async () => {
    const token = await createApiToken(t(), owner.token, { name: 'revisions script' });
    const script: Actor = {
      token: token.token,
      exec: (setting, operation, fields) =>
        t()
          .http()
          .post(`/guilds/${GUILD}/settings`)
          .set('Authorization', `Bearer ${token.token}`)
          .send({ setting, operation, fields }),
    };
    ok(
      await script.exec('protection', 'Create', {
        id: 'default',
        hoist_detection: 1,
        fake_bot_detection: 0,
      }),
    );
    const [latest] = (await page({ session_id: token.sessionId })).revisions;
    expect(latest).toMatchObject({
      setting: 'protection',
      operation: 'Create',
      key: { id: 'default' },
      session_id: token.sessionId,
      session_type: 'api',
      user_id: DEMO_IDS.alice,
    });
  });

  describe('versions', () => {
    it('reads every row with its version; Update and Delete refuse a stale one with 409', async () => {
      const created = ok(
        await owner.exec('commands', 'Create', {
          command: 'warn',
          enabled: true,
          allowed_roles: [],
          disabled_channels: [],
        }),
      ) as Row;
      expect(created.version).toBe(1);
      const [viewed] = ok(await owner.exec('commands', 'View', { command: 'warn' })) as Row[];
      expect(viewed.version).toBe(1);

      const updated = ok(
        await owner.exec('commands', 'Update', { command: 'warn', enabled: false, version: 1 }),
      ) as Row;
      expect(updated).toMatchObject({ enabled: false, version: 2 });

      const stale = await owner.exec('commands', 'Update', {
        command: 'warn',
        enabled: true,
        version: 1,
      });
      const message =
        'commands entry command warn has changed since you read it (it is at version 2, you sent 1); read it again and retry';
      expect(stale.status).toBe(409);
      expect(stale.body).toEqual({
        message,
        code: 'VersionConflict',
        details: [{ field: 'version', message }],
      });
      const staleDelete = await owner.exec('commands', 'Delete', { command: 'warn', version: 1 });
      expect(staleDelete.status).toBe(409);
      const [kept] = ok(await owner.exec('commands', 'View', { command: 'warn' })) as Row[];
      expect(kept).toMatchObject({ enabled: false, version: 2 });

      // Without a version, as before: the change applies to the row as it is.
      expect(
        ok(await owner.exec('commands', 'Update', { command: 'warn', enabled: true })),
      ).toMatchObject({ version: 3 });
      expect(ok(await owner.exec('commands', 'Delete', { command: 'warn', version: 3 }))).toEqual({
        command: 'warn',
      });
    });

    it('refuses a Reorder naming a stale version, and moves nothing', async () => {
      ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.member, perms: [], index: 40 }));
      ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.member, perms: ['rpc.view'] }));
      const stale = await owner.exec('guildroles', 'Reorder', [
        { role_id: ROLE.member, index: 41, version: 1 },
      ]);
      expect(stale.status).toBe(409);
      expect(stale.body.code).toBe('VersionConflict');
      const current = ok(
        await owner.exec('guildroles', 'Reorder', [
          { role_id: ROLE.member, index: 41, version: 2 },
        ]),
      ) as Row[];
      expect(current).toEqual([expect.objectContaining({ index: 41, version: 3 })]);
    });

    it.each([
      ['a string', '1'],
      ['zero', 0],
      ['a fraction', 1.5],
      ['null', null],
    ])('refuses %s as a version with 400', async (_case, version) => {
      const res = await owner.exec('commands', 'Delete', { command: 'kick', version });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field: 'version' }] });
    });

    it('two admins racing on the same version: one change lands, the other gets 409 and nothing is lost', async () => {
      // The demo user (a moderator) may edit protection: a second admin.
      ok(
        await owner.exec('guildroles', 'Create', {
          role_id: ROLE.moderator,
          perms: ['lockdown_settings.*'],
          index: 3,
        }),
      );
      const second = await actor(t(), DEMO_IDS.demoUser);
      const created = ok(
        await owner.exec('lockdown_settings', 'Create', {
          id: 'default',
          member_roles: [ROLE.member],
          require_correct_layout: false,
        }),
      ) as Row;
      const before = (await page({ setting: 'lockdown_settings' })).revisions.length;
      const answers = await Promise.all([
        owner.exec('lockdown_settings', 'Update', {
          id: 'default',
          require_correct_layout: true,
          version: created.version,
        }),
        second.exec('lockdown_settings', 'Update', {
          id: 'default',
          member_roles: [],
          version: created.version,
        }),
      ]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 409]);
      const winner = answers.findIndex((res) => res.status === 200);
      const [row] = ok(await owner.exec('lockdown_settings', 'View', {})) as Row[];
      expect(row).toMatchObject(
        winner === 0
          ? { require_correct_layout: true, member_roles: [ROLE.member], version: 2 }
          : { require_correct_layout: false, member_roles: [], version: 2 },
      );
      const trail = (await page({ setting: 'lockdown_settings' })).revisions;
      expect(trail).toHaveLength(before + 1);
      expect(trail[0]).toMatchObject({
        operation: 'Update',
        user_id: winner === 0 ? DEMO_IDS.alice : DEMO_IDS.demoUser,
      });
    });
  });

  describe('GET /guilds/{guild_id}/settings/revisions', () => {
    it('filters by setting, entry, author, operation and time, newest first', async () => {
      const all = await page({ limit: '100' });
      const revisionsOf = (p: Page): number[] => p.revisions.map((r) => r.revision);
      expect(revisionsOf(all)).toEqual([...revisionsOf(all)].sort((a, b) => b - a));
      const vip = await page({ setting: 'guildroles', key: JSON.stringify({ role_id: ROLE.vip }) });
      expect(vip.revisions.length).toBeGreaterThanOrEqual(3);
      expect(vip.revisions.every((r) => r.key?.role_id === ROLE.vip)).toBe(true);
      const updates = await page({ operation: 'Update' });
      expect(updates.revisions.every((r) => r.operation === 'Update')).toBe(true);
      expect(updates.revisions.length).toBeGreaterThan(0);
      const byDemoUser = await page({ author: DEMO_IDS.demoUser });
      expect(byDemoUser.revisions.every((r) => r.user_id === DEMO_IDS.demoUser)).toBe(true);
      const nobody = await page({ author: DEMO_IDS.carol });
      expect(nobody).toEqual({ revisions: [], next_cursor: null });
      const oldest = all.revisions.at(-1)!;
      const future = new Date(Date.now() + 60_000).toISOString();
      expect((await page({ since: future })).revisions).toEqual([]);
      expect(revisionsOf(await page({ until: oldest.created_at }))).toEqual([]);
      expect(revisionsOf(await page({ since: oldest.created_at, limit: '100' }))).toEqual(
        revisionsOf(all),
      );
    });

    it('pages with a cursor: every revision once, no gaps, even while new ones are added', async () => {
      const all = (await page({ limit: '100' })).revisions.map((r) => r.revision);
      const seen: number[] = [];
      let cursor: string | null = null;
      let first = true;
      do {
        const next: Page = await page({ limit: '2', ...(cursor ? { cursor } : {}) });
        seen.push(...next.revisions.map((r) => r.revision));
        cursor = next.next_cursor;
        if (first) {
          // A change made meanwhile does not shift the pages that follow.
          ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, index: 9 }));
          first = false;
        }
      } while (cursor !== null);
      expect(seen).toEqual(all);
    });

    it('needs settings_history.view: 403 without it, naming a token scope that limits it', async () => {
      const carol = await loginAs(t(), DEMO_IDS.carol);
      const refused = await revisions(carol.token);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        message: 'You need the permission settings_history.view in this guild',
        code: 'Restricted',
      });
      const scoped = await t()
        .http()
        .post('/sessions')
        .set('Authorization', `Bearer ${owner.token}`)
        .send({
          name: 'roles only',
          type: 'api',
          expiry: 3600,
          scope: { permissions: ['guildroles.view'] },
        })
        .expect(201);
      const limited = await revisions(scoped.body.token as string);
      expect(limited.status).toBe(403);
      expect(limited.body.message).toBe(
        'This API token is limited to the permissions guildroles.view; it cannot use settings_history.view',
      );
      const unknownGuild = await t()
        .http()
        .get('/guilds/1100000000000009999/settings/revisions')
        .set('Authorization', `Bearer ${owner.token}`);
      expect(unknownGuild.status).toBe(404);
    });

    it.each([
      ['limit 0', { limit: '0' }, 'limit'],
      ['limit over 100', { limit: '101' }, 'limit'],
      ['a limit that is not a number', { limit: 'ten' }, 'limit'],
      ['a limit with a sign', { limit: '+5' }, 'limit'],
      ['cursor 0', { cursor: '0' }, 'cursor'],
      ['a negative cursor', { cursor: '-1' }, 'cursor'],
      ['a cursor over the revision range', { cursor: '99999999999' }, 'cursor'],
      ['a key that is not JSON', { setting: 'guildroles', key: 'role_id=1' }, 'key'],
      ['a key that is not an object', { setting: 'guildroles', key: '["1"]' }, 'key'],
      ['a key without a setting', { key: '{"role_id":"1"}' }, 'key'],
      ['an author that is not a snowflake', { author: 'alice' }, 'author'],
      ['a session that is not a UUID', { session_id: 'x' }, 'session_id'],
      ['an operation that records nothing', { operation: 'View' }, 'operation'],
      ['a time that is not ISO 8601', { since: 'yesterday' }, 'since'],
      ['an impossible date', { until: '2026-02-30T00:00:00Z' }, 'until'],
      ['a time beyond what can be stored', { since: '+275760-09-14T00:00:00Z' }, 'since'],
      ['a time without a zone', { since: '2026-11-01T00:00:00' }, 'since'],
      ['an unknown parameter', { sort: 'asc' }, 'sort'],
    ])('refuses %s with 400 naming the parameter', async (_case, query, field) => {
      const res = await revisions(owner.token, query);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field }] });
    });

    it('refuses a repeated parameter with 400', async () => {
      const res = await t()
        .http()
        .get(`/guilds/${GUILD}/settings/revisions?setting=a&setting=b`)
        .set('Authorization', `Bearer ${owner.token}`);
      expect(res.status).toBe(400);
    });
  });
});

describe('settings revisions: the migration from the audit log', () => {
  const t = useTestApp();

  it('turns every audit record into a revision of its guild, in order, a Reorder into one per entry', async () => {
    const database = databaseOf(t());
    // Back to just before the revisions arrived: later migrations first, then that one.
    for (let reverted = false; !reverted;) {
      const [last] = await database.query<{ name: string }[]>(
        'SELECT name FROM migrations ORDER BY "timestamp" DESC LIMIT 1',
      );
      reverted = last.name.startsWith('SettingsRevisions');
      await database.undoLastMigration();
    }
    await database.query(
      `INSERT INTO settings_audit_log (guild_id, setting, operation, user_id, before, after, created_at) VALUES
        ('5', 'guildroles', 'Create', '10', NULL, '{"role_id":"1","index":1}', '2026-01-01T00:00:00Z'),
        ('5', 'guildroles', 'Reorder', '10', '[{"role_id":"1","index":1},{"role_id":"2","index":2}]',
          '[{"role_id":"1","index":2},{"role_id":"2","index":1}]', '2026-01-02T00:00:00Z'),
        ('6', 'protection', 'Delete', '11', '{"id":"default"}', NULL, '2026-01-01T00:00:00Z')`,
    );
    await database.runMigrations({ transaction: 'each' });
    const rows = await database.query<Row[]>(
      `SELECT guild_id, revision, setting, operation, key, before, after, diff, session_id
         FROM settings_revisions WHERE guild_id IN ('5', '6') ORDER BY guild_id, revision`,
    );
    const legacy = { key: null, diff: null, session_id: null };
    expect(rows).toEqual([
      {
        guild_id: '5',
        revision: 1,
        setting: 'guildroles',
        operation: 'Create',
        before: null,
        after: { role_id: '1', index: 1 },
        ...legacy,
      },
      {
        guild_id: '5',
        revision: 2,
        setting: 'guildroles',
        operation: 'Reorder',
        before: { role_id: '1', index: 1 },
        after: { role_id: '1', index: 2 },
        ...legacy,
      },
      {
        guild_id: '5',
        revision: 3,
        setting: 'guildroles',
        operation: 'Reorder',
        before: { role_id: '2', index: 2 },
        after: { role_id: '2', index: 1 },
        ...legacy,
      },
      {
        guild_id: '6',
        revision: 1,
        setting: 'protection',
        operation: 'Delete',
        before: { id: 'default' },
        after: null,
        ...legacy,
      },
    ]);
    const [table] = await database.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'settings_audit_log'`,
    );
    expect(table.n).toBe(0);
  });
});

describe('settings rollback', () => {
  // Platform answers expire after a second, so a role deleted on the platform is soon seen gone.
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });
  let owner: Actor;

  const post = (token: string, path: string): Promise<Response> =>
    t()
      .http()
      .post(`/guilds/${GUILD}/settings/revisions/${path}`)
      .set('Authorization', `Bearer ${token}`);
  const latest = async (setting: string): Promise<Revision> => {
    const res = await t()
      .http()
      .get(`/guilds/${GUILD}/settings/revisions`)
      .query({ setting, limit: '1' })
      .set('Authorization', `Bearer ${owner.token}`)
      .expect(200);
    return (res.body as Page).revisions[0];
  };
  const entry = async (setting: string, key: Row): Promise<Row | undefined> =>
    ((ok(await owner.exec(setting, 'View', key)) as Row[]) ?? [])[0];

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
  });

  it('reverts an Update, a Create, a Delete and a Reorder, recording what it undid', async () => {
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.vip,
        perms: ['rpc.view'],
        index: 7,
      }),
    );
    const created = await latest('guildroles');
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.kick'] }));
    const updated = await latest('guildroles');

    const undone = await post(owner.token, `${updated.revision}/revert`);
    expect(undone.status).toBe(200);
    expect(undone.body.revisions).toEqual([
      expect.objectContaining({
        operation: 'Update',
        key: { role_id: ROLE.vip },
        reverts: updated.revision,
        user_id: DEMO_IDS.alice,
        diff: expect.objectContaining({ perms: { before: ['rpc.kick'], after: ['rpc.view'] } }),
      }),
    ]);
    expect(await entry('guildroles', { role_id: ROLE.vip })).toMatchObject({
      perms: ['rpc.view'],
      version: 3,
    });

    // A Reorder, reverted: the index goes back.
    ok(await owner.exec('guildroles', 'Reorder', [{ role_id: ROLE.vip, index: 12 }]));
    const reordered = await latest('guildroles');
    expect((await post(owner.token, `${reordered.revision}/revert`)).status).toBe(200);
    expect(await entry('guildroles', { role_id: ROLE.vip })).toMatchObject({ index: 7 });

    // A Create, reverted: the entry is deleted; that Delete, reverted: it is back.
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.helper,
        perms: ['rpc.view'],
        index: 9,
      }),
    );
    const helper = await latest('guildroles');
    const deleted = await post(owner.token, `${helper.revision}/revert`);
    expect(deleted.body.revisions).toEqual([
      expect.objectContaining({ operation: 'Delete', reverts: helper.revision }),
    ]);
    expect(await entry('guildroles', { role_id: ROLE.helper })).toBeUndefined();
    const recreated = await post(owner.token, `${deleted.body.revisions[0].revision}/revert`);
    expect(recreated.body.revisions).toEqual([expect.objectContaining({ operation: 'Create' })]);
    expect(await entry('guildroles', { role_id: ROLE.helper })).toMatchObject({
      perms: ['rpc.view'],
      index: 9,
      version: 1,
    });
    // The first Create cannot be undone now: the entry has changed since.
    expect((await post(owner.token, `${created.revision}/revert`)).status).toBe(409);
  });

  it('restores a setting as a revision left it: every later change of that setting undone at once', async () => {
    ok(
      await owner.exec('protection', 'Create', {
        id: 'default',
        hoist_detection: 1,
        fake_bot_detection: 2,
        max_mentions: 5,
      }),
    );
    const point = await latest('protection');
    const state = await entry('protection', { id: 'default' });
    ok(await owner.exec('protection', 'Update', { id: 'default', max_mentions: 9 }));
    ok(await owner.exec('protection', 'Update', { id: 'default', hoist_detection: 7 }));
    // Another setting's change in between is left alone.
    ok(
      await owner.exec('commands', 'Create', {
        command: 'kick',
        enabled: true,
        allowed_roles: [],
        disabled_channels: [],
      }),
    );

    const restored = await post(owner.token, `${point.revision}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.revisions).toHaveLength(1);
    expect(await entry('protection', { id: 'default' })).toMatchObject({
      max_mentions: state?.max_mentions,
      hoist_detection: state?.hoist_detection,
      version: 4,
    });
    expect(await entry('commands', { command: 'kick' })).toBeDefined();
    // Already as it was: nothing to do.
    const again = await post(owner.token, `${point.revision}/restore`);
    expect(again.body).toEqual({ revisions: [] });
  });

  it('refuses to revert an entry changed since, saying so, and writes nothing', async () => {
    ok(
      await owner.exec('commands', 'Create', {
        command: 'warn',
        enabled: true,
        allowed_roles: [],
        disabled_channels: [],
      }),
    );
    ok(await owner.exec('commands', 'Update', { command: 'warn', enabled: false }));
    const first = await latest('commands');
    ok(await owner.exec('commands', 'Update', { command: 'warn', allowed_roles: [ROLE.member] }));
    const before = await latest('commands');
    const refused = await post(owner.token, `${first.revision}/revert`);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      code: 'VersionConflict',
      message: `Cannot undo: {"command":"warn"}: the entry has changed since revision ${first.revision} (it is at version 3)`,
      details: [
        {
          field: '{"command":"warn"}',
          message: `the entry has changed since revision ${first.revision} (it is at version 3)`,
        },
      ],
    });
    expect((await latest('commands')).revision).toBe(before.revision);
  });

  it('refuses to revert a change to an entry deleted and created again since, even at the same version', async () => {
    ok(
      await owner.exec('commands', 'Create', {
        command: 'purge',
        enabled: true,
        allowed_roles: [],
        disabled_channels: [],
      }),
    );
    ok(await owner.exec('commands', 'Update', { command: 'purge', enabled: false }));
    const update = await latest('commands');
    ok(await owner.exec('commands', 'Delete', { command: 'purge' }));
    ok(
      await owner.exec('commands', 'Create', {
        command: 'purge',
        enabled: true,
        allowed_roles: [ROLE.member],
        disabled_channels: [],
      }),
    );
    ok(await owner.exec('commands', 'Update', { command: 'purge', enabled: false }));
    expect(await entry('commands', { command: 'purge' })).toMatchObject({ version: 2 });
    const refused = await post(owner.token, `${update.revision}/revert`);
    expect(refused.status).toBe(409);
    expect(await entry('commands', { command: 'purge' })).toMatchObject({
      allowed_roles: [ROLE.member],
    });
  });

  it('runs the hierarchy rules as for a change by hand: a moderator cannot undo a change to a role above theirs', async () => {
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['guildroles.*', 'settings_history.view'],
        index: 3,
      }),
    );
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.administrator,
        perms: ['rpc.view'],
        index: 1,
      }),
    );
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.administrator, perms: [] }));
    const change = await latest('guildroles');
    const moderator = await actor(t(), DEMO_IDS.demoUser);
    const refused = await post(moderator.token, `${change.revision}/revert`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: 'Restricted',
      message: 'Your highest Discord role must be above that role',
    });
    expect((await latest('guildroles')).revision).toBe(change.revision);
  });

  it('refuses to bring back an entry whose role no longer exists', async () => {
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.eventHost,
        perms: ['rpc.view'],
        index: 20,
      }),
    );
    ok(await owner.exec('guildroles', 'Delete', { role_id: ROLE.eventHost }));
    const deleted = await latest('guildroles');
    emulatorOf(t()).state.deleteRole(GUILD, ROLE.eventHost);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const refused = await post(owner.token, `${deleted.revision}/revert`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      `Invalid fields: ${ROLE.eventHost} is not a role of this guild`,
    );
    expect(await entry('guildroles', { role_id: ROLE.eventHost })).toBeUndefined();
  });

  it('needs settings_history.view, and answers 404 for a revision the guild does not have', async () => {
    const carol = await loginAs(t(), DEMO_IDS.carol);
    const refused = await post(carol.token, '1/revert');
    expect(refused.status).toBe(403);
    const missing = await post(owner.token, '999999/revert');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 'NotFound', message: 'No revision 999999 in this guild' });
    for (const bad of ['0', '-1', 'abc', '1.5', '2147483648']) {
      const res = await post(owner.token, `${bad}/restore`);
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ field: 'revision', message: expect.any(String) }]);
    }
  });
});
