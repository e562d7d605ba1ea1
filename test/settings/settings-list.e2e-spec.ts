import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { BUILTIN_SETTINGS, publishedSettings } from 'test/support/declared-settings';
import { GUILD } from 'test/support/demo-world';

interface Setting {
  id: string;
  columns: { id: string; column_type: { type: string } }[];
  validation_template: string;
  [key: string]: unknown;
}

const SETTING_KEYS = [
  'columns',
  'description',
  'footer',
  'icon',
  'id',
  'index_by',
  'name',
  'operations',
  'postsend_template',
  'title_template',
  'validation_template',
  'view_template',
];

/** Every field each published object carries, present even where it has no value (null or []). */
const COLUMN_KEYS = [
  'column_type',
  'default',
  'description',
  'hidden',
  'id',
  'name',
  'nullable',
  'placeholder',
  'primary_key',
  'readonly',
];
const INNER_KEYS: Record<string, string[]> = {
  String: ['allowed_values', 'kind', 'max_length', 'min_length', 'suggestions', 'type'],
  Integer: ['max', 'min', 'type'],
  Float: ['max', 'min', 'type'],
  Boolean: ['type'],
  BitFlag: ['type', 'values'],
  Json: ['style', 'type'],
  Info: ['message', 'type'],
  Warning: ['message', 'type'],
  Button: ['label', 'operation', 'type'],
};
const INNER_TYPES: Record<string, string[]> = {
  Scalar: ['String', 'Integer', 'Float', 'Boolean', 'BitFlag', 'Json'],
  Array: ['String', 'Integer', 'Float', 'Boolean', 'BitFlag', 'Json'],
  Widget: ['Info', 'Warning', 'Button'],
};

describe('GET /guilds/{guild_id}/settings', () => {
  const t = useTestApp();

  it("serves every module's settings, grouped by module, to a non-member too", async () => {
    // dave is not a member of the community.
    const { token } = await loginAs(t(), DEMO_IDS.dave);
    const res = await t()
      .http()
      .get(`/guilds/${GUILD}/settings`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    const groups = res.body as Record<string, { type: string; data: Setting[] }>;
    const ids = Object.fromEntries(
      Object.entries(groups).map(([group, result]) => [group, result.data.map((s) => s.id)]),
    );
    // Every declared setting once, the built-ins in their modules' groups (a setting a module
    // adds joins its own group, or an existing one).
    expect(Object.values(ids).flat().sort()).toEqual(BUILTIN_SETTINGS);
    expect(ids).toMatchObject({
      commands: expect.arrayContaining(['commands']),
      permissions: expect.arrayContaining(['guildroles', 'guildmembers']),
      logging: expect.arrayContaining(['auditlog_sinks']),
      moderation: expect.arrayContaining(['lockdown_settings', 'protection']),
      settings: expect.arrayContaining(['settings_history']),
    });
    for (const result of Object.values(groups)) {
      expect(result.type).toBe('Ok');
      for (const setting of result.data) {
        expect(Object.keys(setting).sort()).toEqual(SETTING_KEYS);
        const schema = JSON.parse(setting.validation_template) as {
          $schema: string;
          $defs: object;
        };
        expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
        expect(Object.keys(schema.$defs)).toContain('View');
      }
    }
  });

  it('publishes every field of every Setting, Column and inner type of every built-in', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.demoUser);
    const settings = await publishedSettings<Setting>(t(), token);
    const seen = new Set<string>();
    for (const setting of settings) {
      expect({ setting: setting.id, keys: Object.keys(setting).sort() }).toEqual({
        setting: setting.id,
        keys: SETTING_KEYS,
      });
      for (const column of setting.columns as unknown as Record<string, unknown>[]) {
        const where = `${setting.id}.${String(column.id)}`;
        expect({ where, keys: Object.keys(column).sort() }).toEqual({ where, keys: COLUMN_KEYS });
        const columnType = column.column_type as { type: string; inner: Record<string, unknown> };
        expect({ where, keys: Object.keys(columnType).sort() }).toEqual({
          where,
          keys: ['inner', 'type'],
        });
        const innerType = String(columnType.inner.type);
        expect({ where, inner: INNER_TYPES[columnType.type]?.includes(innerType) }).toEqual({
          where,
          inner: true,
        });
        expect({ where, keys: Object.keys(columnType.inner).sort() }).toEqual({
          where,
          keys: INNER_KEYS[innerType],
        });
        seen.add(innerType);
      }
    }
    // The built-ins exercise these kinds; a kind no built-in uses is covered by the unit tests.
    expect([...seen].sort()).toEqual(['BitFlag', 'Boolean', 'Info', 'Integer', 'Json', 'String']);
  });

  it('publishes columns exactly as declared, widgets and hidden lists included', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.demoUser);
    const res = await t()
      .http()
      .get(`/guilds/${GUILD}/settings`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    const lockdown = (res.body.moderation.data as Setting[]).find(
      (s) => s.id === 'lockdown_settings',
    );
    expect(lockdown?.columns.find((c) => c.id === 'about')).toEqual({
      id: 'about',
      name: 'What a lockdown does',
      description: expect.stringContaining('Manage Channels and Manage Roles'),
      placeholder: null,
      nullable: false,
      primary_key: false,
      hidden: [],
      readonly: [],
      column_type: {
        type: 'Widget',
        inner: { type: 'Info', message: expect.stringContaining('lockdown') },
      },
      default: null,
    });
    const roles = (res.body.permissions.data as Setting[]).find((s) => s.id === 'guildroles');
    expect(roles).toMatchObject({ index_by: 'index', footer: { end_text: expect.any(String) } });
    const template = JSON.parse(roles?.validation_template ?? '{}') as { $defs: object };
    expect(Object.keys(template.$defs).sort()).toEqual([
      'Create',
      'Delete',
      'Reorder',
      'Update',
      'View',
    ]);
  });

  it('answers 404 for a guild the bot is not in, and 400 for a malformed id', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.demoUser);
    const missing = await t()
      .http()
      .get(`/guilds/${DEMO_IDS.sandbox}/settings`)
      .set('Authorization', `Bearer ${token}`)
      .expect(404);
    expect(missing.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    await t()
      .http()
      .get('/guilds/abc/settings')
      .set('Authorization', `Bearer ${token}`)
      .expect(400);
    await t().http().get(`/guilds/${GUILD}/settings`).expect(401);
  });
});
