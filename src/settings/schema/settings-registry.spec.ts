import type { DiscoveryService } from '@nestjs/core';
import { Column, CreateDateColumn, DataSource, Entity } from 'typeorm';
import { AuditlogSinkEntity } from 'src/audit-log/auditlog-sink.entity';
import { GuildRolesSetting } from 'src/permissions/guildroles.setting';
import { ProtectionEntity } from 'src/moderation/protection.entity';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import type { SettingDefinition, SettingProvider } from 'src/settings/schema/settings-definition';
import type { ColumnSchema, SettingSchema } from 'src/settings/schema/settings-schema';
import { InvalidSettingsError, SettingsRegistry } from 'src/settings/schema/settings-registry';
import { textChannel } from 'src/settings/schema/guild-checks';
import { FeedbackSetting, FeedbackTopicEntity } from 'test/fixtures/feedback.setting';

/** A data source that knows the entities' metadata, as the application's does, never connected. */
async function metadataOf(...entities: (new () => object)[]): Promise<DataSource> {
  const dataSource = new DataSource({ type: 'postgres', entities });
  // What initialize() does first, without a database.
  await (dataSource as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  return dataSource;
}

async function registryOf(...providers: SettingProvider[]): Promise<SettingsRegistry> {
  const discovery = {
    getProviders: () => providers.map((instance) => ({ instance })),
  } as unknown as DiscoveryService;
  const dataSource = await metadataOf(
    GuildRoleEntity,
    FeedbackTopicEntity,
    FeedbackWithExtrasEntity,
    AuditlogSinkEntity,
  );
  return new SettingsRegistry(discovery, dataSource);
}

/** The feedback fixture with one column replaced (or added). */
function feedbackWith(column: ColumnSchema, entity?: SettingDefinition['entity']): SettingProvider {
  const { definition } = new FeedbackSetting();
  const columns = definition.schema.columns.filter((c) => c.id !== column.id);
  return {
    definition: {
      ...definition,
      entity: entity ?? definition.entity,
      schema: { ...definition.schema, columns: [...columns, column] },
    },
  };
}

/** The feedback fixture without one of its columns. */
function feedbackWithout(columnId: string): SettingProvider {
  const { definition } = new FeedbackSetting();
  const columns = definition.schema.columns.filter((c) => c.id !== columnId);
  return { definition: { ...definition, schema: { ...definition.schema, columns } } };
}

/** The same setting offering only View and Delete: it never creates rows. */
function viewAndDeleteOnly({ definition }: SettingProvider): SettingProvider {
  const operations: SettingSchema['operations'] = ['View', 'Delete'];
  return { definition: { ...definition, schema: { ...definition.schema, operations } } };
}

const cooldown = (inner: ColumnSchema['column_type']['inner']): ColumnSchema => ({
  id: 'cooldown',
  name: 'Cooldown',
  description: 'Seconds',
  placeholder: null,
  nullable: false,
  primary_key: false,
  hidden: [],
  readonly: [],
  column_type: { type: 'Scalar', inner } as ColumnSchema['column_type'],
});

/** The feedback table with columns the setting need not declare: the database fills them. */
@Entity({ name: 'test_feedback_extras' })
class FeedbackWithExtrasEntity extends FeedbackTopicEntity {
  @Column({ type: 'varchar', length: 20, nullable: true })
  note!: string | null;

  @Column({ type: 'integer', default: 0 })
  hits!: number;

  @CreateDateColumn({ type: 'timestamptz' })
  noted_at!: Date;
}

describe('the settings registry at boot', () => {
  it('serves the declared settings with their validation_template', async () => {
    const registry = await registryOf(new GuildRolesSetting());
    registry.onModuleInit();
    const setting = registry.get('guildroles');
    expect(setting?.group).toBe('permissions');
    expect(JSON.parse(setting?.validationTemplate ?? '{}')).toMatchObject({
      $defs: { Reorder: { type: 'array' } },
    });
  });

  it('refuses to boot with an inconsistent declaration, naming the setting', async () => {
    const broken = new GuildRolesSetting();
    const definition = {
      ...broken.definition,
      schema: { ...broken.definition.schema, index_by: 'rank' },
    };
    const registry = await registryOf({ definition });
    expect(() => registry.onModuleInit()).toThrow(InvalidSettingsError);
    expect(() => registry.onModuleInit()).toThrow('guildroles: index_by "rank" is not a column');
  });

  it('refuses to boot with a sample its own fields refuse, naming the setting and the field', async () => {
    const { definition } = new GuildRolesSetting();
    const registry = await registryOf({
      definition: {
        ...definition,
        samples: { create: { role_id: 'helper', perms: [], index: 1 }, update: { index: 0 } },
      },
    });
    expect(() => registry.onModuleInit()).toThrow(
      /guildroles: its sample Create is refused: role_id .*; guildroles: its sample Update is refused: /,
    );
  });

  it('refuses a guild check on a column the setting does not have', async () => {
    const { definition } = new GuildRolesSetting();
    const registry = await registryOf({
      definition: { ...definition, guildChecks: { channel: [textChannel] } },
    });
    expect(() => registry.onModuleInit()).toThrow(
      'guildroles: a channel check in guildChecks names the column channel, which the setting does not have',
    );
  });

  it('refuses two declarations of one setting', async () => {
    const registry = await registryOf(new GuildRolesSetting(), new GuildRolesSetting());
    expect(() => registry.onModuleInit()).toThrow('guildroles: declared by two modules');
  });

  it.each([
    [
      'bounds beyond the column type',
      feedbackWith(cooldown({ type: 'Integer', min: 0, max: 2 ** 31 })),
      'feedback_topics (entity FeedbackTopicEntity): column "cooldown": the bounds [0, 2147483648] exceed integer ([-2147483648, 2147483647])',
    ],
    [
      'a fraction into an integer column',
      feedbackWith(cooldown({ type: 'Float', min: 0, max: 1 })),
      'feedback_topics (entity FeedbackTopicEntity): column "cooldown": Float values cannot be stored in integer',
    ],
    [
      'a nullable column stored NOT NULL',
      feedbackWith({ ...cooldown({ type: 'Integer', min: 0, max: 9 }), nullable: true }),
      'feedback_topics (entity FeedbackTopicEntity): column "cooldown": declared nullable, but NOT NULL in the entity',
    ],
    [
      'a column the entity lacks',
      feedbackWith({ ...cooldown({ type: 'Boolean' }), id: 'muted' }),
      'feedback_topics (entity FeedbackTopicEntity): column "muted": the entity has no such column',
    ],
    [
      'a string longer than its varchar',
      feedbackWith({
        ...cooldown({ type: 'String', kind: 'normal', max_length: 33 }),
        id: 'topic',
        primary_key: true,
      }),
      'feedback_topics (entity FeedbackTopicEntity): column "topic": values may be 33 characters long, but character varying(32) holds 32',
    ],
    [
      'a string with no max_length in a varchar',
      feedbackWith({
        ...cooldown({ type: 'String', kind: 'normal' }),
        id: 'topic',
        primary_key: true,
      }),
      'feedback_topics (entity FeedbackTopicEntity): column "topic": values may be 4000 characters long, but character varying(32) holds 32',
    ],
    [
      'an interval in an integer column',
      feedbackWith(cooldown({ type: 'String', kind: 'interval' })),
      'feedback_topics (entity FeedbackTopicEntity): column "cooldown": String values cannot be stored in integer',
    ],
    [
      'a default the column refuses',
      feedbackWith({ ...cooldown({ type: 'Integer', min: 0, max: 9 }), default: 10 }),
      'feedback_topics: column "cooldown": the default 10 must be <= 9',
    ],
    [
      'a default of the wrong type',
      feedbackWith({ ...cooldown({ type: 'Integer', min: 0, max: 9 }), default: '0' }),
      'feedback_topics: column "cooldown": the default "0" must be integer',
    ],
    [
      'an entity TypeORM does not know',
      feedbackWith(cooldown({ type: 'Integer', min: 0, max: 9 }), ProtectionEntity),
      'feedback_topics (entity ProtectionEntity): the entity is not registered with TypeORM',
    ],
    [
      'an entity column the setting does not declare',
      feedbackWithout('cooldown'),
      'feedback_topics (entity FeedbackTopicEntity): the entity\'s column "cooldown" is NOT NULL without a default, and the setting does not declare it: no row could be written',
    ],
  ])(
    'refuses to boot with %s, naming the setting, the entity and the column',
    async (_name, provider, problem) => {
      const registry = await registryOf(provider);
      expect(() => registry.onModuleInit()).toThrow(InvalidSettingsError);
      expect(() => registry.onModuleInit()).toThrow(problem);
    },
  );

  it.each([
    [
      'nullable, defaulted and generated columns it does not declare',
      feedbackWith(cooldown({ type: 'Integer', min: 0, max: 9 }), FeedbackWithExtrasEntity),
    ],
    [
      'a NOT NULL column it does not declare, when it never creates rows',
      viewAndDeleteOnly(feedbackWithout('cooldown')),
    ],
  ])('accepts an entity with %s', async (_name, provider) => {
    const registry = await registryOf(provider);
    expect(() => registry.onModuleInit()).not.toThrow();
    expect(registry.get('feedback_topics')).toBeDefined();
  });

  it('publishes the row version of an entity that keeps one, for Update and Delete to send back', async () => {
    const registry = await registryOf(new GuildRolesSetting());
    registry.onModuleInit();
    const setting = registry.get('guildroles');
    expect(setting?.schema.columns.at(-1)).toMatchObject({
      id: 'version',
      readonly: ['Create', 'Update'],
      column_type: { type: 'Scalar', inner: { type: 'Integer', min: 1, max: 2 ** 31 - 1 } },
    });
    const version = { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 };
    const template = JSON.parse(setting?.validationTemplate ?? '{}') as {
      $defs: Record<string, { properties: Record<string, unknown>; required: string[] }>;
    };
    expect(template.$defs.Update.properties.version).toEqual(version);
    expect(template.$defs.Delete.properties.version).toEqual(version);
    expect(template.$defs.Delete.required).toEqual(['role_id']);
    // An echoed row's version is accepted on Create, and ignored.
    expect(template.$defs.Create.properties.version).toEqual(version);
  });

  it('publishes the bounds of the column type where a declaration gives none', async () => {
    const registry = await registryOf(feedbackWith(cooldown({ type: 'Integer', min: 0 })));
    registry.onModuleInit();
    const column = registry.get('feedback_topics')?.schema.columns.find((c) => c.id === 'cooldown');
    expect(column?.column_type.inner).toEqual({ type: 'Integer', min: 0, max: 2 ** 31 - 1 });
    const template = JSON.parse(registry.get('feedback_topics')?.validationTemplate ?? '{}') as {
      $defs: { Create: { properties: Record<string, unknown> } };
    };
    expect(template.$defs.Create.properties.cooldown).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: 2 ** 31 - 1,
    });
  });
});
