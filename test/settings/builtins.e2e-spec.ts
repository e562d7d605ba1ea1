import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import {
  CREATABLE_SETTINGS,
  publishedSettings,
  SETTING_SAMPLES,
} from 'test/support/declared-settings';
import { actor, ok, ROLE, type Actor } from 'test/support/demo-world';

type Row = Record<string, unknown>;

/** The settings that declare samples (the examples of the committed document). */
const SAMPLED_SETTINGS = Object.keys(SETTING_SAMPLES).sort();

describe('built-in settings, every operation, by the guild owner', () => {
  const t = useTestApp();
  let owner: Actor;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
  });

  // Every setting that declares samples, as the committed document shows them (its Create and
  // Update examples): a setting declared with samples is walked without a line here.
  it.each(SAMPLED_SETTINGS)('%s: Create, View, Update, Delete', async (setting) => {
    const { create, update: updateExample } = SETTING_SAMPLES[setting];
    const schema = (await publishedSettings(t(), owner.token)).find((s) => s.id === setting)!;
    const keyColumns = schema.columns.filter((c) => c.primary_key).map((c) => c.id);
    const update = Object.fromEntries(
      Object.entries(updateExample).filter(([column]) => !keyColumns.includes(column)),
    );
    const created = ok(await owner.exec(setting, 'Create', create)) as Row;
    expect(created).toMatchObject(create);
    expect(created).toMatchObject({ created_by: DEMO_IDS.alice, last_updated_by: DEMO_IDS.alice });
    const key = Object.fromEntries(keyColumns.map((column) => [column, created[column]]));

    const viewed = ok(await owner.exec(setting, 'View', {})) as Row[];
    expect(viewed).toContainEqual(created);

    const updated = ok(await owner.exec(setting, 'Update', { ...key, ...update })) as Row;
    expect(updated).toEqual({
      ...created,
      ...update,
      version: 2,
      last_updated_at: expect.any(String),
    });

    // A second entry with the same key is refused, unless the service chooses keys.
    const chosenByService = schema.columns.some(
      (c) => c.primary_key && (c.readonly as string[] | undefined)?.includes('Create'),
    );
    const duplicate = await owner.exec(setting, 'Create', { ...create, ...key });
    if (!chosenByService) expect(duplicate.status).toBe(400);

    expect(ok(await owner.exec(setting, 'Delete', key))).toEqual(key);
    expect(ok(await owner.exec(setting, 'View', key))).toEqual([]);
    const gone = await owner.exec(setting, 'Update', { ...key, ...update });
    expect(gone.status).toBe(404);
  });

  it('covers every setting that offers Create: each declares samples', () => {
    expect(SAMPLED_SETTINGS).toEqual(CREATABLE_SETTINGS);
  });

  it('guildroles: stores permission strings in their canonical form', async () => {
    const created = ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.eventHost,
        perms: ['rpc.view', 'test'],
        index: 6,
      }),
    ) as Row;
    expect(created.perms).toEqual(['rpc.view', 'global.test']);
    ok(await owner.exec('guildroles', 'Delete', { role_id: ROLE.eventHost }));
  });

  it('guildroles: Reorder moves entries and View lists them by index', async () => {
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['rpc.*'],
        index: 1,
      }),
    );
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.helper,
        perms: ['rpc.view'],
        index: 2,
      }),
    );
    const reordered = ok(
      await owner.exec('guildroles', 'Reorder', [
        { role_id: ROLE.moderator, index: 3 },
        { role_id: ROLE.helper, index: 1 },
      ]),
    ) as Row[];
    expect(reordered.map((r) => [r.role_id, r.index])).toEqual([
      [ROLE.moderator, 3],
      [ROLE.helper, 1],
    ]);
    const viewed = ok(await owner.exec('guildroles', 'View', {})) as Row[];
    expect(viewed.map((r) => r.role_id)).toEqual([ROLE.helper, ROLE.moderator]);
  });

  describe('permission strings in a namespace that names a setting', () => {
    it.each([
      [
        'guildroles',
        { role_id: ROLE.vip, perms: ['guildroles.veiw'], index: 5 },
        'perms',
        'guildroles.veiw is not a permission of the setting guildroles: it has guildroles.view, guildroles.create, guildroles.update, guildroles.delete, guildroles.reorder, guildroles.*, guildroles.@clear',
      ],
      [
        'guildmembers',
        { user_id: DEMO_IDS.bob, perm_overrides: ['rpc.kick', '~settings_history.edit'] },
        'perm_overrides',
        '~settings_history.edit is not a permission of the setting settings_history: it has settings_history.view, settings_history.*, settings_history.@clear',
      ],
    ])(
      'refuses one the setting does not have (%s), storing nothing',
      async (setting, fields, field, message) => {
        const res = await owner.exec(setting, 'Create', fields);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field, message }] });
        expect(res.body.message).toContain(message);
        const [keyColumn, keyValue] = Object.entries(fields)[0] ?? [];
        expect(ok(await owner.exec(setting, 'View', { [keyColumn]: keyValue }))).toEqual([]);
      },
    );

    it("takes each of a setting's permissions, its wildcard and the bot's own namespaces", async () => {
      const perms = [
        'guildroles.view',
        'guildroles.reorder',
        '~lockdown_settings.update',
        'protection.*',
        'commands.@clear',
        'rpc.frobnicate',
      ];
      const created = ok(
        await owner.exec('guildroles', 'Create', { role_id: ROLE.eventHost, perms, index: 6 }),
      ) as Row;
      expect(created.perms).toEqual(perms);
      ok(await owner.exec('guildroles', 'Delete', { role_id: ROLE.eventHost }));
    });
  });

  it('View filters by column and pages with limit and offset', async () => {
    for (const command of ['kick', 'warn', 'purge']) {
      ok(
        await owner.exec('commands', 'Create', {
          command,
          enabled: command !== 'warn',
          allowed_roles: [],
          disabled_channels: [],
        }),
      );
    }
    const enabled = ok(await owner.exec('commands', 'View', { enabled: true })) as Row[];
    expect(enabled.map((r) => r.command)).toEqual(['kick', 'purge']);
    const page = ok(await owner.exec('commands', 'View', { limit: 1, offset: 1 })) as Row[];
    expect(page.map((r) => r.command)).toEqual(['purge']);
  });

  it('records every change in the audit log, newest first, and stores it', async () => {
    const history = ok(
      await owner.exec('settings_history', 'View', { setting: 'commands', limit: 3 }),
    ) as Row[];
    expect(history.map((h) => h.operation)).toEqual(['Create', 'Create', 'Create']);
    expect(history[0]).toMatchObject({
      setting: 'commands',
      user_id: DEMO_IDS.alice,
      before: null,
      after: { command: 'purge', enabled: true },
    });
    const updates = ok(
      await owner.exec('settings_history', 'View', { operation: 'Update', setting: 'protection' }),
    ) as Row[];
    expect(updates[0]).toMatchObject({
      before: { max_mentions: 10 },
      after: { max_mentions: null },
    });
    const [count] = await databaseOf(t()).query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM settings_revisions WHERE guild_id = $1',
      [DEMO_IDS.community],
    );
    expect(count.n).toBeGreaterThanOrEqual(6 * 3 + 3);
    expect((await owner.exec('settings_history', 'Create', {})).status).toBe(400);
  });
});
