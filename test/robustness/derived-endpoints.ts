import { SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import {
  BAD_SNOWFLAKES,
  BAD_UUIDS,
  INJECTIONS,
  type Caller,
  type Endpoint,
  type FieldSpec,
  type Json,
  type QuerySpec,
} from 'test/robustness/bad-input-cases';

/** What the sweep reads of a schema in the OpenAPI document. */
interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: Json[];
  example?: Json;
  default?: Json;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  example?: Json;
  schema?: Schema;
}

export interface DocumentOperation {
  parameters?: Parameter[];
  security?: object[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  'x-root-users-only'?: boolean;
  'x-required-permission'?: string;
}

export interface Document {
  paths: Record<string, Record<string, DocumentOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

const NOT_A_CHOICE = 'not-one-of-them';

/**
 * The sweep's entry for a route the hand-written table does not list, read from the OpenAPI
 * document: the caller its security names (`x-root-users-only`: a root user's API token), a
 * request built from the document's examples and defaults, and bad values from each schema (its
 * pattern, enum, bounds and length, and values of the wrong JSON type). A new route is swept
 * without a line here; a route whose accepted request needs more than its examples (a stored
 * entry, a body the schema cannot describe) gets its own entry in the table.
 */
export function derivedEndpoint(document: Document, path: string, method: string): Endpoint {
  const operation = document.paths[path]?.[method];
  if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  const resolve = (schema: Schema | undefined): Schema =>
    schema?.$ref
      ? (document.components?.schemas?.[schema.$ref.split('/').at(-1) ?? ''] ?? {})
      : (schema ?? {});
  const parameters = operation.parameters ?? [];
  const pathParameters = parameters.filter((p) => p.in === 'path');
  const [tested, ...others] = pathParameters;
  const endpoint: Endpoint = {
    method: method.toUpperCase() as Endpoint['method'],
    path,
    caller: callerOf(operation),
  };
  if (tested) {
    const schema = resolve(tested.schema);
    endpoint.param = { valid: textOf(exampleOf(tested, schema)), invalid: badPathValues(schema) };
  }
  if (others.length > 0) {
    endpoint.fixed = Object.fromEntries(
      others.map((p) => [p.name, textOf(exampleOf(p, resolve(p.schema)))]),
    );
  }
  const query = parameters.filter((p) => p.in === 'query');
  if (query.length > 0) {
    endpoint.query = Object.fromEntries(
      query.map((p): [string, QuerySpec] => {
        const schema = resolve(p.schema);
        return [
          p.name,
          {
            valid: textOf(exampleOf(p, schema)),
            invalid: badQueryValues(schema),
            ...(p.required && { required: true }),
          },
        ];
      }),
    );
  }
  const body = resolve(operation.requestBody?.content['application/json']?.schema);
  if (body.properties) {
    const required = new Set(body.required ?? []);
    endpoint.body = Object.fromEntries(
      Object.entries(body.properties).map(([name, property]): [string, FieldSpec] => {
        const schema = resolve(property);
        return [
          name,
          {
            valid: exampleOf({ name }, schema),
            invalid: badBodyValues(schema),
            ...(schema.nullable && { nullable: true }),
            ...(!required.has(name) && { optional: true }),
          },
        ];
      }),
    );
  }
  return endpoint;
}

function callerOf(operation: DocumentOperation): Caller {
  if (operation['x-root-users-only']) return 'root-api';
  return (operation.security ?? []).length === 0 ? 'public' : 'login';
}

/** A value the route accepts: the document's example, else its default or first choice. */
function exampleOf(owner: { name: string; example?: Json }, schema: Schema): Json {
  const value = owner.example ?? schema.example ?? schema.default ?? schema.enum?.[0];
  if (value === undefined) {
    throw new Error(
      `${owner.name} has no example, default or choice in openapi.json: give it one (an @example in its DTO), or give its route an entry in the sweep's table`,
    );
  }
  return value;
}

/** A path or query value as sent: text as it is, anything else as JSON. */
function textOf(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const isSnowflake = (schema: Schema): boolean => schema.pattern === SNOWFLAKE_PATTERN.source;

function badPathValues(schema: Schema): string[] {
  if (isSnowflake(schema)) return BAD_SNOWFLAKES;
  if (schema.format === 'uuid') return BAD_UUIDS;
  if (schema.type === 'integer') return ['abc', '-1', '1.5', '1e3', '%zz'];
  return ['%zz', encodeURIComponent(INJECTIONS[0])];
}

function badQueryValues(schema: Schema): string[] {
  const values: string[] = [encodeURIComponent(INJECTIONS[0])];
  if (isSnowflake(schema)) values.push('abc', '-1', '007', '1.5', '1'.repeat(21));
  if (schema.type === 'integer') {
    values.push('abc', '1.5', '1e3', '+1');
    if (schema.minimum !== undefined) values.push(String(schema.minimum - 1));
    if (schema.maximum !== undefined) values.push(String(schema.maximum + 1));
  }
  if (schema.pattern !== undefined && !isSnowflake(schema)) values.push('abc', '0', '-1');
  if (schema.enum) values.push(NOT_A_CHOICE);
  if (schema.format === 'date-time') values.push('now', '2026-13-01T00:00:00Z');
  return values;
}

function badBodyValues(schema: Schema): Json[] {
  const values: Json[] = [];
  if (schema.type === 'string') {
    values.push(...INJECTIONS.filter(() => isSnowflake(schema) || schema.enum !== undefined));
    if (isSnowflake(schema)) values.push('abc', '-1', '007', '1'.repeat(21));
    if (schema.enum) values.push(NOT_A_CHOICE, '');
    if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1));
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.type === 'integer') values.push(1.5);
    if (schema.minimum !== undefined) values.push(schema.minimum - 1);
    if (schema.maximum !== undefined) values.push(schema.maximum + 1);
  }
  return values;
}
