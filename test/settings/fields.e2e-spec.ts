import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { DemoBotReporter } from 'src/bot-reports/demo-bot-reporter';
import { databaseOf, emulatorOf } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { actor, CHANNEL, ok, ROLE, type Actor } from 'test/support/demo-world';

const SINK = { channel: CHANNEL.modLog, events: ['member_ban'], enabled: true };

describe('settings: requests that are refused', () => {
  const t = useTestApp();
  let owner: Actor;

  beforeAll(async () => {
    // Before anything is cached: the bot loses Manage Channels in Bot Lab, as the platform
    // announces it to the bot (which reports it to the service).
    const state = emulatorOf(t()).state;
    const botRole = state.guild(DEMO_IDS.botLab)?.roles.find((role) => role.managed);
    if (!botRole) throw new Error('Bot Lab has no role of the bot');
    state.upsertRole(DEMO_IDS.botLab, {
      ...botRole,
      permissions: (P.ViewChannel | P.SendMessages | P.ManageRoles).toString(),
    });
    await t().app.get(DemoBotReporter).settled();
    owner = await actor(t(), DEMO_IDS.alice);
  });

  it.each([
    [
      'an unknown setting',
      { setting: 'nope', operation: 'View', fields: {} },
      404,
      'Unknown setting nope',
    ],
    [
      'an operation the setting does not offer',
      { setting: 'settings_history', operation: 'Delete', fields: {} },
      400,
      'settings_history does not offer Delete',
    ],
    [
      'Reorder on a setting without index_by',
      { setting: 'guildmembers', operation: 'Reorder', fields: [] },
      400,
      'guildmembers does not offer Reorder',
    ],
    [
      'an unknown operation',
      { setting: 'guildroles', operation: 'Patch', fields: {} },
      400,
      'Invalid request: operation must be one of View, Create, Update, Delete, Reorder',
    ],
    [
      'no fields',
      { setting: 'guildroles', operation: 'View' },
      400,
      'Invalid request: fields is required (use {} for none)',
    ],
    [
      'a body field that does not exist',
      { setting: 'guildroles', operation: 'View', fields: {}, extra: 1 },
      400,
      'Invalid request: property extra should not exist',
    ],
  ])('answers %s', async (_name, body, status, message) => {
    const res = await t()
      .http()
      .post(`/guilds/${DEMO_IDS.community}/settings`)
      .set('Authorization', `Bearer ${owner.token}`)
      .send(body);
    expect(res.status).toBe(status);
    expect(res.body.message).toBe(message);
  });

  it.each([
    [
      'a wrong type',
      'commands',
      { command: 'ban', enabled: 'yes', allowed_roles: [], disabled_channels: [] },
      'enabled',
      'enabled must be boolean',
    ],
    [
      'a missing field',
      'commands',
      { command: 'ban', allowed_roles: [], disabled_channels: [] },
      'enabled',
      'enabled is required for Create',
    ],
    [
      'an unknown field',
      'commands',
      { command: 'ban', enabled: true, allowed_roles: [], disabled_channels: [], color: 1 },
      'color',
      'color is not a field of commands',
    ],
    [
      'null where not nullable',
      'commands',
      { command: 'ban', enabled: null, allowed_roles: [], disabled_channels: [] },
      'enabled',
      'enabled must be boolean',
    ],
    [
      'a value not allowed',
      'commands',
      { command: 'dance', enabled: true, allowed_roles: [], disabled_channels: [] },
      'command',
      'command must be one of',
    ],
    [
      'an array too long',
      'commands',
      {
        command: 'ban',
        enabled: true,
        allowed_roles: Array(101).fill(ROLE.helper),
        disabled_channels: [],
      },
      'allowed_roles',
      'allowed_roles must NOT have more than 100 items',
    ],
    [
      'a bit that is not a flag',
      'protection',
      { id: 'default', hoist_detection: 8, fake_bot_detection: 0 },
      'hoist_detection',
      'hoist_detection may only combine the flags',
    ],
    [
      'an interval that is not seconds',
      'protection',
      { id: 'default', minimum_account_age: '1 week', hoist_detection: 0, fake_bot_detection: 0 },
      'minimum_account_age',
      'must be a whole number of seconds',
    ],
    [
      'a number out of range',
      'protection',
      { id: 'default', max_mentions: 0, hoist_detection: 0, fake_bot_detection: 0 },
      'max_mentions',
      'max_mentions must be >= 1',
    ],
    [
      'a malformed permission string',
      'guildroles',
      { role_id: ROLE.helper, perms: ['two words'], index: 3 },
      'perms.0',
      'must be one permission string',
    ],
    [
      'a role id that is not a snowflake',
      'guildroles',
      { role_id: 'mods', perms: [], index: 3 },
      'role_id',
      'role_id must be a role id (a snowflake)',
    ],
    [
      'a fields array for Create',
      'commands',
      [{ command: 'ban' }],
      'fields',
      'fields must be object',
    ],
  ])('refuses %s with details', async (_name, setting, fields, field, message) => {
    const res = await owner.exec(setting, 'Create', fields);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BadRequest');
    const detail = (res.body.details as { field: string; message: string }[]).find(
      (d) => d.field === field,
    );
    expect(detail?.message).toContain(message);
  });

  it('lists every failure of one request', async () => {
    const res = await owner.exec('commands', 'Create', {
      command: 'dance',
      enabled: 'yes',
      surprise: true,
    });
    expect((res.body.details as { field: string }[]).map((d) => d.field).sort()).toEqual(
      ['allowed_roles', 'command', 'disabled_channels', 'enabled', 'surprise'].sort(),
    );
  });

  it('requires the primary key for Update and Delete', async () => {
    expect((await owner.exec('commands', 'Update', { enabled: true })).body.details).toContainEqual(
      {
        field: 'command',
        message: 'command is required for Update',
      },
    );
    expect((await owner.exec('commands', 'Delete', {})).status).toBe(400);
  });

  it('ignores read-only values', async () => {
    const created = ok(
      await owner.exec('auditlog_sinks', 'Create', {
        ...SINK,
        id: '00000000-0000-0000-0000-000000000000',
        created_by: '1',
      }),
    ) as Record<string, unknown>;
    expect(created.id).not.toBe('00000000-0000-0000-0000-000000000000');
    expect(created.created_by).toBe(DEMO_IDS.alice);
  });

  describe('references to the live guild', () => {
    it('refuses a role of another guild', async () => {
      const res = await owner.exec('guildroles', 'Create', {
        role_id: '1100000000000000301',
        perms: [],
        index: 3,
      });
      expect(res.body.details).toEqual([
        { field: 'role_id', message: '1100000000000000301 is not a role of this guild' },
      ]);
    });

    it('refuses a channel of another guild', async () => {
      const res = await owner.exec('commands', 'Create', {
        command: 'kick',
        enabled: true,
        allowed_roles: [],
        disabled_channels: ['1100000000000000310'],
      });
      expect(res.body.details).toEqual([
        {
          field: 'disabled_channels',
          message: '1100000000000000310 is not a channel of this guild that the bot can view',
        },
      ]);
    });

    it('refuses a log channel where the bot cannot post, naming what it lacks', async () => {
      // rules: the bot may read it, but @everyone may not send there.
      const res = await owner.exec('auditlog_sinks', 'Create', {
        ...SINK,
        channel: CHANNEL.rules,
      });
      expect(res.body.details).toEqual([
        {
          field: 'channel',
          message: `The bot needs SendMessages, EmbedLinks in channel ${CHANNEL.rules}`,
        },
      ]);
    });

    it.each([
      ['1100000000000000129', 'a voice channel'],
      ['1100000000000000130', 'a stage channel'],
      ['1100000000000000128', 'a category'],
    ])('refuses a log channel that takes no messages: %s (%s)', async (channel, what) => {
      const res = await owner.exec('auditlog_sinks', 'Create', { ...SINK, channel });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual(
        expect.arrayContaining([
          {
            field: 'channel',
            message: `${channel} is ${what}; a text or announcement channel is needed`,
          },
        ]),
      );
      const stored = await databaseOf(t()).query<unknown[]>(
        'SELECT 1 FROM auditlog_sinks WHERE channel = $1',
        [channel],
      );
      expect(stored).toEqual([]);
    });

    it('refuses a log channel the bot cannot view: the platform hides it from the bot', async () => {
      const res = await owner.exec('auditlog_sinks', 'Create', {
        ...SINK,
        channel: CHANNEL.staffChat,
      });
      expect(res.body.details).toEqual([
        {
          field: 'channel',
          message: `${CHANNEL.staffChat} is not a channel of this guild that the bot can view`,
        },
      ]);
    });

    it('refuses lockdown settings where the bot cannot manage channels', async () => {
      const carol = await actor(t(), DEMO_IDS.carol);
      const res = await carol.exec(
        'lockdown_settings',
        'Create',
        { id: 'default', member_roles: [], require_correct_layout: false },
        DEMO_IDS.botLab,
      );
      expect(res.body.details).toEqual([
        { field: 'fields', message: 'The bot needs ManageChannels in this guild' },
      ]);
    });
  });

  it('leaves nothing behind when a request is refused', async () => {
    const [before] = await databaseOf(t()).query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM settings_revisions',
    );
    await owner.exec('commands', 'Create', { command: 'dance' });
    await owner.exec('guildroles', 'Create', {
      role_id: '1100000000000000301',
      perms: [],
      index: 3,
    });
    const [after] = await databaseOf(t()).query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM settings_revisions',
    );
    expect(after.n).toBe(before.n);
    const rows = await databaseOf(t()).query('SELECT * FROM command_configs WHERE command = $1', [
      'dance',
    ]);
    expect(rows).toEqual([]);
  });
});
