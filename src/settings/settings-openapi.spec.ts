import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { GuildRolesSetting } from 'src/permissions/guildroles.setting';
import { ProtectionSetting } from 'src/moderation/protection.setting';
import { SettingsHistorySetting } from 'src/settings/revisions/settings-history.setting';
import type { SettingProvider } from 'src/settings/schema/settings-definition';
import { FieldsValidator } from 'src/settings/schema/fields-validator';
import { normalizeSchema } from 'src/settings/schema/normalize-schema';
import type { ExecutableOperation } from 'src/settings/schema/settings-schema';
import { settingRequestSchemas, toOpenApi30 } from 'src/settings/settings-openapi';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';

function registered(provider: SettingProvider): RegisteredSetting {
  const schema = normalizeSchema(provider.definition.schema);
  const validator = new FieldsValidator(schema);
  return {
    ...provider.definition,
    schema,
    validator,
    validationTemplate: JSON.stringify(validator.document),
  };
}

const SETTINGS = [
  registered(new GuildRolesSetting()),
  registered(new ProtectionSetting()),
  registered(new SettingsHistorySetting()),
];
const SCHEMAS = settingRequestSchemas(SETTINGS);

describe('toOpenApi30', () => {
  it.each([
    ['a plain type', { type: 'string', maxLength: 3 }, { type: 'string', maxLength: 3 }],
    [
      "a column's default (Create)",
      { type: 'integer', minimum: 0, maximum: 3600, default: 0 },
      { type: 'integer', minimum: 0, maximum: 3600, default: 0 },
    ],
    [
      'a union with null',
      { type: ['integer', 'null'], minimum: 1 },
      { type: 'integer', nullable: true, minimum: 1 },
    ],
    [
      'an enum with null',
      { type: ['string', 'null'], enum: ['a', null] },
      { type: 'string', nullable: true, enum: ['a', null] },
    ],
    [
      'an empty required list',
      { type: 'object', properties: {}, required: [], additionalProperties: false },
      { type: 'object', properties: {}, additionalProperties: false },
    ],
    [
      'nested properties and items',
      {
        type: 'array',
        items: { type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'] },
      },
      {
        type: 'array',
        items: {
          type: 'object',
          properties: { a: { type: 'string', nullable: true } },
          required: ['a'],
        },
      },
    ],
    ['any value', {}, {}],
  ])('converts %s', (_case, schema, expected) => {
    expect(toOpenApi30(schema, 'x')).toEqual(expected);
  });

  it.each([
    ['a keyword 3.0 does not share', { type: 'string', const: 'a' }, 'x: the keyword "const"'],
    ['a nested one', { properties: { a: { $ref: '#/$defs/A' } } }, 'x.a: the keyword "$ref"'],
    ['a union of two types', { type: ['string', 'integer'] }, 'x: the type union'],
  ])('refuses %s, naming where', (_case, schema, message) => {
    expect(() => toOpenApi30(schema, 'x')).toThrow(message);
  });
});

describe('settingRequestSchemas', () => {
  it('names one schema per setting and operation offered', () => {
    expect(Object.keys(SCHEMAS)).toEqual([
      'GuildrolesViewRequest',
      'GuildrolesCreateRequest',
      'GuildrolesUpdateRequest',
      'GuildrolesDeleteRequest',
      'GuildrolesReorderRequest',
      'ProtectionViewRequest',
      'ProtectionCreateRequest',
      'ProtectionUpdateRequest',
      'ProtectionDeleteRequest',
      'SettingsHistoryViewRequest',
    ]);
    expect(SCHEMAS.GuildrolesReorderRequest).toMatchObject({
      required: ['setting', 'operation', 'fields'],
      additionalProperties: false,
      properties: {
        setting: { type: 'string', enum: ['guildroles'] },
        operation: { type: 'string', enum: ['Reorder'] },
        fields: { type: 'array' },
      },
    });
  });

  // The published schema must accept exactly what the server accepts: checked with an OpenAPI
  // 3.0 reader's validator (draft-07 with `nullable`) against the server's own on the same input.
  const openApiValidator = new Ajv({ allErrors: true, strict: true });
  addFormats(openApiValidator);
  // An OpenAPI 3.0 schema keyword (a setting's sample), not a validation rule.
  openApiValidator.addKeyword('example');

  it("gives each setting's sample Create and Update as the example its own schema accepts", () => {
    const examples = Object.entries(SCHEMAS).filter(([, schema]) => schema.example !== undefined);
    expect(examples.map(([name]) => name).sort()).toEqual(
      expect.arrayContaining(['GuildrolesCreateRequest', 'GuildrolesUpdateRequest']),
    );
    for (const [name, schema] of examples) {
      expect({ name, valid: openApiValidator.compile(schema)(schema.example) }).toEqual({
        name,
        valid: true,
      });
    }
  });
  const role = '1100000000000000104';
  const samples: [string, ExecutableOperation, unknown][] = [
    ['guildroles', 'View', { limit: 25 }],
    ['guildroles', 'View', { limit: 0 }],
    ['guildroles', 'View', { role_id: role, offset: 3 }],
    ['guildroles', 'View', { colour: 'red' }],
    ['guildroles', 'Create', { role_id: role, perms: ['guildroles.view'], index: 1 }],
    ['guildroles', 'Create', { role_id: role, perms: ['two words'], index: 1 }],
    ['guildroles', 'Create', { role_id: role, perms: [], index: 1, created_at: 'echoed' }],
    ['guildroles', 'Create', { role_id: role, index: 1 }],
    ['guildroles', 'Create', { role_id: 'abc', perms: [], index: 1 }],
    ['guildroles', 'Update', { role_id: role, index: 5000 }],
    ['guildroles', 'Update', { role_id: role, perms: ['~rpc.ban'] }],
    ['guildroles', 'Delete', { role_id: role }],
    ['guildroles', 'Delete', {}],
    ['guildroles', 'Reorder', [{ role_id: role, index: 2 }]],
    ['guildroles', 'Reorder', []],
    ['guildroles', 'Reorder', [{ role_id: role }]],
    ['protection', 'Create', { id: 'default', minimum_account_age: null, max_mentions: null }],
    ['protection', 'Create', { id: 'default', minimum_account_age: '60', max_mentions: 5 }],
    ['protection', 'Create', { id: 'default', minimum_account_age: 60 }],
    ['protection', 'Create', { id: 'default', max_mentions: 0 }],
    ['protection', 'Create', { id: 'default', hoist_detection: 7 }],
    ['protection', 'Create', { id: 'default', hoist_detection: 8 }],
    ['protection', 'Create', { id: 'default', hoist_detection: null }],
    ['protection', 'Update', { id: 'default', max_mentions: null }],
    ['settings_history', 'View', { limit: 100 }],
    ['settings_history', 'View', { limit: 101 }],
  ];

  it.each(samples)('%s %s %j: published and enforced agree', (id, operation, fields) => {
    const setting = SETTINGS.find((s) => s.schema.id === id)!;
    const name = Object.keys(SCHEMAS).find(
      (key) =>
        (SCHEMAS[key].properties?.setting as { enum: string[] }).enum[0] === id &&
        (SCHEMAS[key].properties?.operation as { enum: string[] }).enum[0] === operation,
    )!;
    const published = openApiValidator.compile(SCHEMAS[name]);
    const request = { setting: id, operation, fields };
    expect(published(request)).toBe(setting.validator.check(operation, fields).ok);
  });
});
