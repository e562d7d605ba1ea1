import { DataSource } from 'typeorm';
import type { SettingSchema } from 'src/settings/schema/settings-schema';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { committedDocument } from 'test/support/contract';
import { GUILD } from 'test/support/demo-world';
import type { TestApp } from 'test/support/test-app';

/**
 * Every setting the service declares and the operations each offers, as the committed OpenAPI
 * document publishes them (one request body per setting and operation of
 * `POST /guilds/{guild_id}/settings`; `npm run openapi:check` keeps the document equal to the
 * code). Suites that walk every setting take their list from here, so a new setting is walked
 * without a line in any test.
 */
export const DECLARED_OPERATIONS: Readonly<Record<string, readonly string[]>> =
  declaredOperations();

/** The declared settings, by id. */
export const BUILTIN_SETTINGS = Object.keys(DECLARED_OPERATIONS).sort();
/** Those that offer Create. */
export const CREATABLE_SETTINGS = BUILTIN_SETTINGS.filter((id) =>
  DECLARED_OPERATIONS[id]?.includes('Create'),
);
/** Those that offer Create, Update and Delete, each with its own permission. */
export const WRITABLE_SETTINGS = BUILTIN_SETTINGS.filter((id) =>
  ['Create', 'Update', 'Delete'].every((operation) => DECLARED_OPERATIONS[id]?.includes(operation)),
);

function declaredOperations(): Record<string, string[]> {
  const document = committedDocument();
  const body = (
    document.paths['/guilds/{guild_id}/settings']?.post?.requestBody as {
      content: Record<string, { schema: { oneOf: { $ref: string }[] } }>;
    }
  ).content['application/json'];
  const operations: Record<string, string[]> = {};
  for (const { $ref } of body?.schema.oneOf ?? []) {
    const schema = document.components?.schemas?.[$ref.split('/').at(-1) ?? ''] as {
      properties: { setting: { enum: [string] }; operation: { enum: [string] } };
    };
    const [setting] = schema.properties.setting.enum;
    (operations[setting] ??= []).push(schema.properties.operation.enum[0]);
  }
  return operations;
}

/**
 * Each setting's sample entry (`samples` in its declaration), as the committed document shows it:
 * the examples of its Create and Update bodies. Suites that need an entry of every setting start
 * from these, so a new setting brings its own.
 */
export const SETTING_SAMPLES: Readonly<
  Record<string, { create: Record<string, unknown>; update: Record<string, unknown> }>
> = settingSamples();

function settingSamples(): Record<
  string,
  { create: Record<string, unknown>; update: Record<string, unknown> }
> {
  const samples: Record<
    string,
    { create: Record<string, unknown>; update: Record<string, unknown> }
  > = {};
  const schemas = (committedDocument().components?.schemas ?? {}) as Record<
    string,
    { example?: { setting: string; operation: string; fields: Record<string, unknown> } }
  >;
  for (const { example } of Object.values(schemas)) {
    if (!example || (example.operation !== 'Create' && example.operation !== 'Update')) continue;
    const entry = (samples[example.setting] ??= { create: {}, update: {} });
    entry[example.operation === 'Create' ? 'create' : 'update'] = example.fields;
  }
  return samples;
}

/** The table of every declared setting, as the running application's registry has them. */
export function settingTables(t: TestApp): string[] {
  const database = t.app.get(DataSource);
  return t.app
    .get(SettingsRegistry)
    .all()
    .map((setting) => database.getMetadata(setting.entity).tableName)
    .sort();
}

/** Every setting `GET /guilds/{guild_id}/settings` publishes, all groups together. */
export async function publishedSettings<T = SettingSchema>(
  t: TestApp,
  token: string,
  guildId = GUILD,
): Promise<T[]> {
  const res = await t
    .http()
    .get(`/guilds/${guildId}/settings`)
    .set('Authorization', `Bearer ${token}`)
    .expect(200);
  return Object.values(res.body as Record<string, { data: T[] }>).flatMap((group) => group.data);
}
