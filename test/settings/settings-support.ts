import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import type { SettingSchema } from 'src/settings/schema/settings-schema';
import { DataSource } from 'typeorm';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { committedDocument } from 'test/support/contract';
import type { TestApp } from 'test/support/test-app';

/** Ids of the demo community (src/platform/emulator/demo.seed.ts). */
export const GUILD = DEMO_IDS.community;
const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
export const ROLE = {
  administrator: id(1),
  botRole: id(2),
  moderator: id(3),
  helper: id(4),
  eventHost: id(5),
  vip: id(7),
  member: id(9),
};
export const CHANNEL = { rules: id(21), general: id(24), modLog: id(32), staffChat: id(33) };
/** An `auditlog_sinks` entry the bot can serve: the moderation log channel. */
export const SINK_FIELDS = { channel: CHANNEL.modLog, events: ['lockdown'], enabled: true };

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

/** A logged-in demo user who runs setting operations. */
export interface Actor {
  token: string;
  exec(setting: string, operation: string, fields: unknown, guildId?: string): Promise<Response>;
}

export async function actor(t: TestApp, userId: string): Promise<Actor> {
  const { token } = await loginAs(t, userId);
  return {
    token,
    exec: (setting, operation, fields, guildId = GUILD) =>
      t
        .http()
        .post(`/guilds/${guildId}/settings`)
        .set('Authorization', `Bearer ${token}`)
        .send({ setting, operation, fields }),
  };
}

/** Asserts a 200 `{type: "Ok", data}` answer and returns `data`. */
export function ok(res: Response): unknown {
  expect({ status: res.status, body: res.body as unknown }).toMatchObject({
    status: 200,
    body: { type: 'Ok' },
  });
  return (res.body as { data: unknown }).data;
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
