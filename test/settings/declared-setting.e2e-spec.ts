import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { FEEDBACK_TABLE_SQL, FeedbackSettingModule } from 'test/fixtures/feedback.setting';
import { actor, CHANNEL, GUILD, ok } from 'test/support/demo-world';

describe('a setting declared by another module, with no engine change', () => {
  const t = useTestApp({ imports: [FeedbackSettingModule] });

  beforeAll(async () => {
    await databaseOf(t()).query(FEEDBACK_TABLE_SQL);
  });

  it('appears in GET under its module', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    const res = await t()
      .http()
      .get(`/guilds/${GUILD}/settings`)
      .set('Authorization', `Bearer ${owner.token}`)
      .expect(200);
    expect(res.body.feedback).toMatchObject({
      type: 'Ok',
      data: [{ id: 'feedback_topics', operations: ['View', 'Create', 'Delete'] }],
    });
    // The default is published on its column and in the Create fields of the template.
    const [setting] = res.body.feedback.data as {
      columns: { id: string; default?: unknown }[];
      validation_template: string;
    }[];
    expect(setting.columns.find((column) => column.id === 'cooldown')?.default).toBe(0);
    expect(setting.columns.find((column) => column.id === 'channel')?.default).toBeNull();
    const create = (
      JSON.parse(setting.validation_template) as {
        $defs: { Create: { required: string[]; properties: Record<string, object> } };
      }
    ).$defs.Create;
    expect(create.required).toEqual(['topic', 'channel']);
    expect(create.properties.cooldown).toMatchObject({ default: 0 });
  });

  it('runs through the engine: permissions, validation, references, storage and audit', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    const created = ok(
      await owner.exec('feedback_topics', 'Create', {
        topic: 'bugs',
        channel: CHANNEL.general,
        cooldown: 60,
      }),
    );
    expect(created).toMatchObject({ topic: 'bugs', channel: CHANNEL.general, cooldown: 60 });
    expect(ok(await owner.exec('feedback_topics', 'View', {}))).toEqual([created]);
    const invalid = await owner.exec('feedback_topics', 'Create', {
      topic: 'x',
      channel: '1',
      cooldown: -1,
    });
    expect((invalid.body.details as { field: string }[]).map((d) => d.field).sort()).toEqual([
      'cooldown',
    ]);
    const foreign = await owner.exec('feedback_topics', 'Create', {
      topic: 'x',
      channel: '1',
      cooldown: 1,
    });
    expect(foreign.body.details).toEqual([
      { field: 'channel', message: '1 is not a channel of this guild that the bot can view' },
    ]);
    expect((await owner.exec('feedback_topics', 'Update', { topic: 'bugs' })).status).toBe(400);
    // A column declared with a default may be left out of Create: the default is stored.
    const defaulted = ok(
      await owner.exec('feedback_topics', 'Create', { topic: 'ideas', channel: CHANNEL.general }),
    );
    expect(defaulted).toMatchObject({ topic: 'ideas', cooldown: 0 });
    const [stored] = await databaseOf(t()).query<{ cooldown: number }[]>(
      `SELECT cooldown FROM test_feedback_topics WHERE topic = 'ideas'`,
    );
    expect(stored).toEqual({ cooldown: 0 });
    ok(await owner.exec('feedback_topics', 'Delete', { topic: 'ideas' }));
    const member = await actor(t(), DEMO_IDS.demoUser);
    expect((await member.exec('feedback_topics', 'View', {})).status).toBe(403);
    expect(ok(await owner.exec('feedback_topics', 'Delete', { topic: 'bugs' }))).toEqual({
      topic: 'bugs',
    });
    const history = ok(
      await owner.exec('settings_history', 'View', { setting: 'feedback_topics' }),
    ) as unknown[];
    expect(history).toHaveLength(4);
  });
});
