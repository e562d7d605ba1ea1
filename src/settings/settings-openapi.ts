import type { INestApplicationContext } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/schema/settings-registry';
import { sampleFields } from 'src/settings/schema/setting-samples';
import type { JsonSchema } from 'src/settings/schema/validation-schema';

/** The operation whose body the per-setting schemas describe. */
const EXECUTE_OPERATION = 'SettingsController_execute';
/** The generic body the per-setting schemas replace. */
const GENERIC_BODY = 'ExecuteSettingDto';

/** Shown in Swagger UI and checked by the lint against the schemas below. */
const BODY_EXAMPLE = { setting: 'guildroles', operation: 'View', fields: { limit: 25 } };

/**
 * Types `POST /guilds/{guild_id}/settings`'s body per setting and operation: one schema per pair,
 * with the setting's `fields` exactly as its `validation_template` describes them (the document
 * the server validates with), so a typed client checks `fields` against the setting it names.
 * Every registered setting is included, built-in or declared by any module. Needs the initialized
 * application (the registry fills at module init); without it the document keeps the generic body.
 */
export function withSettingRequestBodies(
  document: OpenAPIObject,
  app: INestApplicationContext,
): OpenAPIObject {
  const settings = app.get(SettingsRegistry, { strict: false }).all();
  if (settings.length === 0) return document;
  const body = executeBody(document);
  const schemas = settingRequestSchemas(settings);
  document.components ??= {};
  document.components.schemas ??= {};
  Object.assign(document.components.schemas, schemas);
  body.schema = { oneOf: Object.keys(schemas).map((name) => ({ $ref: schemaRef(name) })) };
  body.example = BODY_EXAMPLE;
  delete document.components.schemas[GENERIC_BODY];
  return document;
}

function executeBody(document: OpenAPIObject): { schema?: object; example?: unknown } {
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as {
      operationId?: string;
      requestBody?: { content: Record<string, { schema?: object; example?: unknown }> };
    }[]) {
      if (operation?.operationId === EXECUTE_OPERATION && operation.requestBody) {
        return operation.requestBody.content['application/json'];
      }
    }
  }
  throw new Error(`The document has no ${EXECUTE_OPERATION} operation with a JSON body`);
}

function schemaRef(name: string): string {
  return `#/components/schemas/${name}`;
}

/** One request schema per setting and operation, named `<Setting><Operation>Request`. */
export function settingRequestSchemas(
  settings: readonly RegisteredSetting[],
): Record<string, SchemaObject> {
  const schemas: Record<string, SchemaObject> = {};
  for (const setting of [...settings].sort((a, b) => a.schema.id.localeCompare(b.schema.id))) {
    const defs = setting.validator.document.$defs as Record<string, JsonSchema>;
    const samples: Record<string, unknown> = sampleFields(setting) ?? {};
    for (const [operation, fields] of Object.entries(defs)) {
      const sample = samples[operation];
      schemas[`${pascalCase(setting.schema.id)}${operation}Request`] = {
        // The setting's sample (checked at boot): shown as this body's example.
        ...(sample !== undefined && {
          example: { setting: setting.schema.id, operation, fields: sample },
        }),
        type: 'object',
        description: `${setting.schema.name}: ${operation}`,
        properties: {
          setting: { type: 'string', enum: [setting.schema.id] },
          operation: { type: 'string', enum: [operation] },
          fields: toOpenApi30(fields, `${setting.schema.id}.${operation}`),
        },
        required: ['setting', 'operation', 'fields'],
        additionalProperties: false,
      };
    }
  }
  return schemas;
}

function pascalCase(id: string): string {
  return id
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

/** The keywords `validationSchema` emits, all with the same meaning in OpenAPI 3.0's schemas. */
const SHARED_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'enum',
  'minimum',
  'maximum',
  'default',
]);

/**
 * A fields schema (JSON Schema 2020-12, as `validationSchema` writes it) in OpenAPI 3.0's dialect:
 * a `[type, "null"]` union becomes `nullable`, and an empty `required` is left out (3.0 requires
 * at least one name). The generator uses a small, fixed set of keywords; any other is refused here,
 * so a change there cannot publish a schema that means something else in 3.0.
 */
export function toOpenApi30(schema: JsonSchema, where: string): SchemaObject {
  const converted: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (!SHARED_KEYWORDS.has(keyword)) {
      throw new Error(`${where}: the keyword "${keyword}" has no OpenAPI 3.0 equivalent here`);
    }
    switch (keyword) {
      case 'type':
        Object.assign(converted, typeOf(value, where));
        break;
      case 'required':
        if ((value as string[]).length > 0) converted.required = value;
        break;
      case 'properties':
        converted.properties = Object.fromEntries(
          Object.entries(value as Record<string, JsonSchema>).map(([name, property]) => [
            name,
            toOpenApi30(property, `${where}.${name}`),
          ]),
        );
        break;
      case 'items':
        converted.items = toOpenApi30(value as JsonSchema, `${where}[]`);
        break;
      case 'additionalProperties':
        converted.additionalProperties =
          typeof value === 'boolean' ? value : toOpenApi30(value as JsonSchema, `${where}.*`);
        break;
      default:
        converted[keyword] = value;
    }
  }
  return converted;
}

function typeOf(type: unknown, where: string): { type: string; nullable?: true } {
  if (typeof type === 'string') return { type };
  const types = type as string[];
  const named = types.filter((name) => name !== 'null');
  if (named.length !== 1) {
    throw new Error(`${where}: the type union ${JSON.stringify(types)} has no OpenAPI 3.0 form`);
  }
  return named.length < types.length ? { type: named[0], nullable: true } : { type: named[0] };
}
