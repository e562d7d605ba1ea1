import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf, loginAs } from 'test/support/auth';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';
import { CREATABLE_SETTINGS } from 'test/support/declared-settings';
import { actor, CHANNEL, GUILD, ok, ROLE, SINK_FIELDS, type Actor } from 'test/support/demo-world';

// Every test here runs on the embedded engine by default and on PostgreSQL with DATABASE_URL.

type Row = Record<string, unknown>;
interface ExportDocument {
  format: string;
  version: number;
  guild_id: string;
  exported_at: string;
  revision: number;
  settings: Record<string, Row[]>;
}

const exportOf = (t: TestApp, token: string): Promise<Response> =>
  t.http().get(`/guilds/${GUILD}/settings/export`).set('Authorization', `Bearer ${token}`);
const importInto = (t: TestApp, token: string, body: object): Promise<Response> =>
  t
    .http()
    .post(`/guilds/${GUILD}/settings/import`)
    .set('Authorization', `Bearer ${token}`)
    .send(body);

/** A configuration touching several settings, made through the API. */
async function configure(owner: Actor): Promise<void> {
  ok(
    await owner.exec('guildroles', 'Create', {
      role_id: ROLE.moderator,
      perms: ['rpc.*'],
      index: 3,
    }),
  );
  ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.helper, perms: [], index: 4 }));
  ok(
    await owner.exec('commands', 'Create', {
      command: 'ban',
      enabled: false,
      allowed_roles: [ROLE.moderator],
      disabled_channels: [CHANNEL.general],
    }),
  );
  ok(
    await owner.exec('protection', 'Create', {
      id: 'default',
      minimum_account_age: '3600',
      hoist_detection: 3,
      fake_bot_detection: 1,
    }),
  );
  ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS));
}

async function revisionCount(t: TestApp): Promise<number> {
  const [row] = await databaseOf(t).query<{ n: number }[]>(
    'SELECT count(*)::int AS n FROM settings_revisions WHERE guild_id = $1',
    [GUILD],
  );
  return row.n;
}

describe('settings export and import', () => {
  const t = useTestApp();
  let owner: Actor;
  let document: ExportDocument;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    await configure(owner);
  });

  it('exports every configuration setting the caller may view, as one versioned document', async () => {
    const res = await exportOf(t(), owner.token);
    expect(res.status).toBe(200);
    document = res.body as ExportDocument;
    expect(document).toMatchObject({
      format: 'bot-management-service/settings',
      version: 1,
      guild_id: GUILD,
      revision: await revisionCount(t()),
    });
    expect(Object.keys(document.settings).sort()).toEqual(CREATABLE_SETTINGS);
    expect(document.settings.guildroles).toEqual([
      { role_id: ROLE.moderator, perms: ['rpc.*'], index: 3 },
      { role_id: ROLE.helper, perms: [], index: 4 },
    ]);
    // Keys and values a client sets; no audit columns, no versions.
    expect(document.settings.protection).toEqual([
      {
        id: 'default',
        minimum_account_age: '3600',
        max_mentions: null,
        hoist_detection: 3,
        fake_bot_detection: 1,
      },
    ]);
  });

  it('exports only what a scoped token may view, and refuses a caller who may view nothing', async () => {
    const scoped = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${owner.token}`)
      .send({
        name: 'roles',
        type: 'api',
        expiry: 3600,
        scope: { permissions: ['guildroles.view'] },
      })
      .expect(201);
    const limited = await exportOf(t(), scoped.body.token as string);
    expect(Object.keys((limited.body as ExportDocument).settings)).toEqual(['guildroles']);
    const carol = await loginAs(t(), DEMO_IDS.carol);
    const refused = await exportOf(t(), carol.token);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('Restricted');
  });

  it('dry run: reports exactly what an import would change, and changes nothing', async () => {
    // The guild moves on after the export.
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, perms: ['rpc.view'] }));
    ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.vip, perms: [], index: 9 }));
    ok(await owner.exec('commands', 'Delete', { command: 'ban' }));
    const revisions = await revisionCount(t());
    const res = await importInto(t(), owner.token, { document });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dry_run: true,
      applied: false,
      unknown_references: { roles: [], channels: [] },
      revisions: [],
    });
    expect(res.body.settings.guildroles).toEqual({
      created: [],
      updated: [
        {
          key: { role_id: ROLE.helper },
          changes: { perms: { before: ['rpc.view'], after: [] } },
        },
      ],
      deleted: [{ role_id: ROLE.vip }],
      unchanged: [{ role_id: ROLE.moderator }],
      refused: [],
    });
    expect(res.body.settings.commands.created).toEqual([document.settings.commands[0]]);
    expect(res.body.settings.protection.unchanged).toEqual([{ id: 'default' }]);
    expect(await revisionCount(t())).toBe(revisions);
    const [helper] = ok(await owner.exec('guildroles', 'View', { role_id: ROLE.helper })) as Row[];
    expect(helper.perms).toEqual(['rpc.view']);
  });

  it('apply: commits the whole diff in one transaction, with revisions, and the guild matches the document', async () => {
    const before = await revisionCount(t());
    const res = await importInto(t(), owner.token, { document, dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: false, applied: true });
    const revisions = res.body.revisions as { operation: string; session_type: string }[];
    expect(revisions.map((r) => r.operation).sort()).toEqual(['Create', 'Delete', 'Update']);
    expect(await revisionCount(t())).toBe(before + 3);
    const again = (await exportOf(t(), owner.token)).body as ExportDocument;
    expect(again.settings).toEqual(document.settings);
  });

  it('refuses the whole import when one entry is refused, and maps ids to make it apply', async () => {
    const missingRole = '1100000000000000199';
    const edited: ExportDocument = {
      ...document,
      settings: {
        guildroles: [
          ...document.settings.guildroles,
          { role_id: missingRole, perms: ['rpc.view'], index: 8 },
        ],
        commands: [{ ...document.settings.commands[0], enabled: true }],
      },
    };
    const dryRun = await importInto(t(), owner.token, { document: edited });
    expect(dryRun.body.unknown_references).toEqual({ roles: [missingRole], channels: [] });
    expect(dryRun.body.settings.guildroles.refused).toEqual([
      {
        key: { role_id: missingRole },
        operation: 'Create',
        reasons: [`Invalid fields: ${missingRole} is not a role of this guild`],
      },
    ]);
    const before = await revisionCount(t());
    const applied = await importInto(t(), owner.token, { document: edited, dry_run: false });
    expect(applied.status).toBe(400);
    expect(applied.body).toEqual({
      code: 'BadRequest',
      message:
        'The import was refused: 1 entry cannot be applied (see details); nothing was changed',
      details: [
        {
          field: `guildroles {"role_id":"${missingRole}"}`,
          message: `Invalid fields: ${missingRole} is not a role of this guild`,
        },
      ],
    });
    expect(await revisionCount(t())).toBe(before);
    const [ban] = ok(await owner.exec('commands', 'View', { command: 'ban' })) as Row[];
    expect(ban.enabled).toBe(false);

    const mapped = await importInto(t(), owner.token, {
      document: edited,
      dry_run: false,
      mapping: { roles: { [missingRole]: ROLE.vip } },
    });
    expect(mapped.status).toBe(200);
    expect(mapped.body.settings.guildroles.created).toEqual([
      { role_id: ROLE.vip, perms: ['rpc.view'], index: 8 },
    ]);
    expect(ok(await owner.exec('guildroles', 'View', { role_id: ROLE.vip }))).toHaveLength(1);
  });

  it("runs under the caller's permissions: each write they may not make is refused with the reason", async () => {
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.demoUser,
        perm_overrides: ['guildroles.view', 'commands.view'],
      }),
    );
    const viewer = await loginAs(t(), DEMO_IDS.demoUser);
    const res = await importInto(t(), viewer.token, {
      document: {
        ...document,
        // The earlier import enabled the command: the document's entry differs.
        settings: { commands: [document.settings.commands[0]] },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.settings.commands.refused).toEqual([
      {
        key: { command: 'ban' },
        operation: 'Update',
        reasons: ['You need the permission commands.update in this guild'],
      },
    ]);
  });

  it('never compares against a setting the caller may not view: no keys, no values in the report', async () => {
    const carol = await loginAs(t(), DEMO_IDS.carol);
    const guess = document.settings.guildroles[0];
    const res = await importInto(t(), carol.token, {
      document: { ...document, settings: { guildroles: [guess], guildmembers: [] } },
    });
    expect(res.status).toBe(200);
    for (const setting of ['guildroles', 'guildmembers']) {
      expect(res.body.settings[setting]).toEqual({
        created: [],
        updated: [],
        deleted: [],
        unchanged: [],
        refused: [
          {
            key: {},
            operation: null,
            reasons: [`You need the permission ${setting}.view in this guild to import it`],
          },
        ],
      });
    }
  });

  it('refuses an entry with a column the setting does not have, naming it', async () => {
    const res = await importInto(t(), owner.token, {
      document: {
        ...document,
        settings: { guildroles: [{ ...document.settings.guildroles[0], colour: 'red' }] },
      },
    });
    expect(res.body.settings.guildroles.refused).toEqual([
      {
        key: { role_id: document.settings.guildroles[0].role_id },
        operation: null,
        reasons: ['guildroles has no column colour'],
      },
    ]);
  });

  it('reports a created entry as stored: a key the server generates is the server’s', async () => {
    const res = await importInto(t(), owner.token, {
      document: {
        ...document,
        settings: {
          auditlog_sinks: [{ ...SINK_FIELDS, id: '00000000-0000-4000-8000-000000000001' }],
        },
      },
      dry_run: false,
    });
    expect(res.status).toBe(200);
    const [created] = res.body.settings.auditlog_sinks.created as Row[];
    expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(created.id).not.toBe('00000000-0000-4000-8000-000000000001');
    expect(res.body.settings.auditlog_sinks.deleted).toHaveLength(1);
  });

  it('refuses a document of more entries than one import takes', async () => {
    const res = await importInto(t(), owner.token, {
      document: {
        ...document,
        settings: { guildroles: Array.from({ length: 2_001 }, () => ({})) },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('The document holds 2001 entries; one import takes at most 2000');
  });

  it.each([
    ['no document', () => ({}), 'document'],
    ['another format', () => ({ document: { ...document, format: 'x' } }), 'document.format'],
    ['a later version', () => ({ document: { ...document, version: 2 } }), 'document.version'],
    [
      'settings that are not an object',
      () => ({ document: { ...document, settings: [] } }),
      'document.settings',
    ],
    [
      'a setting whose entries are not an array',
      () => ({ document: { ...document, settings: { guildroles: 'x' } } }),
      'document.settings',
    ],
    [
      'entries that are not objects',
      () => ({ document: { ...document, settings: { guildroles: [1] } } }),
      'document.settings',
    ],
    [
      'a guild id that is not a snowflake',
      () => ({ document: { ...document, guild_id: 'abc' } }),
      'document.guild_id',
    ],
    ['a dry_run that is not a boolean', () => ({ document, dry_run: 'yes' }), 'dry_run'],
    ['a mapping of non-ids', () => ({ document, mapping: { roles: { a: 'b' } } }), 'mapping.roles'],
    ['an unknown field', () => ({ document, extra: 1 }), 'extra'],
  ])('refuses %s with 400 naming the field', async (_case, body, field) => {
    const res = await importInto(t(), owner.token, body());
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it.each([
    [
      'a row key "constructor"',
      '{"guildroles":[{"constructor":"x"}]}',
      '',
      'document.settings.guildroles.0.constructor',
    ],
    ['a setting named "constructor"', '{"constructor":[]}', '', 'document.settings.constructor'],
    [
      'a mapping key "constructor", spelt with an escape',
      '{}',
      ',"mapping":{"roles":{"\\u0063onstructor":"1100000000000000103"}}',
      'mapping.roles.constructor',
    ],
  ])('refuses %s with 400 naming it', async (_case, settings, extra, field) => {
    const body = JSON.stringify({ document: { ...document, settings: {} } })
      .replace('"settings":{}', `"settings":${settings}`)
      .replace(/}$/, `${extra}}`);
    const res = await t()
      .http()
      .post(`/guilds/${GUILD}/settings/import`)
      .set('Authorization', `Bearer ${owner.token}`)
      .set('Content-Type', 'application/json')
      .send(body);
    // Refused by the body parser, as the CLI refuses such a file: nothing is taken for a member
    // of Object.prototype, and nothing is silently dropped.
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field }] });
  });

  it('reports a setting it cannot import, and applies nothing', async () => {
    const res = await importInto(t(), owner.token, {
      document: { ...document, settings: { nope: [], settings_history: [] } },
      dry_run: false,
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'nope {}', message: 'nope is not a setting this service can import' },
      {
        field: 'settings_history {}',
        message: 'settings_history is not a setting this service can import',
      },
    ]);
  });
});

describe('settings export and import: a round trip between two databases', () => {
  it('moves a configuration to another instance and back, unchanged', async () => {
    const source = await createTestApp();
    const target = await createTestApp();
    try {
      const sourceOwner = await actor(source, DEMO_IDS.alice);
      await configure(sourceOwner);
      const exported = (await exportOf(source, sourceOwner.token)).body as ExportDocument;

      const targetOwner = await actor(target, DEMO_IDS.alice);
      const dryRun = await importInto(target, targetOwner.token, { document: exported });
      expect(dryRun.body.applied).toBe(false);
      expect(dryRun.body.settings.guildroles.created).toHaveLength(2);
      const applied = await importInto(target, targetOwner.token, {
        document: exported,
        dry_run: false,
      });
      expect(applied.status).toBe(200);
      expect(applied.body.applied).toBe(true);

      const back = (await exportOf(target, targetOwner.token)).body as ExportDocument;
      // The sink's id is the server's to generate: it is the one value that differs.
      const withoutIds = (doc: ExportDocument): Record<string, Row[]> => ({
        ...doc.settings,
        auditlog_sinks: doc.settings.auditlog_sinks.map((row) => ({ ...row, id: 'generated' })),
      });
      expect(withoutIds(back)).toEqual(withoutIds(exported));
      // And back again: nothing left to change but the sink, matched by its key.
      const returned = await importInto(source, sourceOwner.token, { document: back });
      for (const [setting, report] of Object.entries(
        returned.body.settings as Record<
          string,
          { created: Row[]; updated: Row[]; deleted: Row[] }
        >,
      )) {
        if (setting === 'auditlog_sinks') continue;
        expect({ setting, ...report }).toMatchObject({ created: [], updated: [], deleted: [] });
      }
    } finally {
      await source.close();
      await target.close();
    }
  });
});
