import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { DISCORD_SPEC_ALLOWLIST } from 'test/fixtures/discord-openapi/allowlist';

/**
 * Discord's published OpenAPI 3.1 document (a pinned copy, test/fixtures/discord-openapi/) as a
 * validator of answers: Ajv's JSON Schema 2020-12 dialect, which is OpenAPI 3.1's, with the
 * document's formats registered and union types allowed. `allowlisted: true` applies the
 * allowlist (allowlist.ts): the places where Discord's documentation, which its README says wins,
 * disagrees with the document.
 */

export const DISCORD_SPEC_DIR = join(__dirname, '..', 'fixtures', 'discord-openapi');
const DOCUMENT_ID = 'https://discord.com/api/v10/openapi.json';

export interface SpecSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SpecSchema>;
  required?: string[];
  additionalProperties?: boolean | SpecSchema;
  items?: SpecSchema;
  oneOf?: SpecSchema[];
  anyOf?: SpecSchema[];
  allOf?: SpecSchema[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
}

interface SpecResponse {
  $ref?: string;
  content?: { 'application/json'?: { schema?: SpecSchema } };
}

export interface DiscordDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, SpecResponse> }>>;
  components: { schemas: Record<string, SpecSchema>; responses: Record<string, SpecResponse> };
}

/** One way an answer differs from the document. */
export interface SpecViolation {
  /** JSON pointer into the answer's body. */
  at: string;
  message: string;
}

const INT32 = 2 ** 31;

/** The `format`s the document uses; Ajv checks a format it does not know only in strict mode. */
function addDiscordFormats(ajv: Ajv2020): void {
  addFormats(ajv, ['date-time', 'uri']);
  ajv.addFormat('snowflake', /^(0|[1-9][0-9]{0,19})$/);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
  // A message nonce, on strings of at most 25 characters (`maxLength` says so already).
  ajv.addFormat('nonce', true);
}

/** The pinned document, as read from the repository (one parse per process). */
let pristine: DiscordDocument | undefined;
export function discordDocument(): DiscordDocument {
  pristine ??= JSON.parse(
    readFileSync(join(DISCORD_SPEC_DIR, 'openapi.json'), 'utf8'),
  ) as DiscordDocument;
  return pristine;
}

/** The document with the allowlist's widenings applied to its component schemas. */
function allowlistedDocument(): DiscordDocument {
  const document = structuredClone(discordDocument());
  for (const entry of DISCORD_SPEC_ALLOWLIST) {
    const schemas = document.components.schemas;
    if (!schemas[entry.schema]) throw new Error(`allowlist: no schema ${entry.schema}`);
    schemas[entry.schema] = entry.widen(schemas[entry.schema]);
  }
  return document;
}

export class DiscordSpec {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  private constructor(readonly document: DiscordDocument) {
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addDiscordFormats(this.ajv);
    // OpenAPI's own fields around the schemas, and its extension keywords, annotate nothing here.
    this.ajv.addVocabulary([
      'openapi',
      'info',
      'externalDocs',
      'servers',
      'paths',
      'components',
      'x-discord-union',
    ]);
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  private static instances = new Map<boolean, DiscordSpec>();

  /** The validator; `allowlisted: false` checks against the document exactly as published. */
  static get({ allowlisted = true }: { allowlisted?: boolean } = {}): DiscordSpec {
    let spec = this.instances.get(allowlisted);
    if (!spec) {
      spec = new DiscordSpec(allowlisted ? allowlistedDocument() : discordDocument());
      this.instances.set(allowlisted, spec);
    }
    return spec;
  }

  /** Whether the document describes `method path` (a template: `/guilds/{guild_id}`). */
  describes(method: string, path: string): boolean {
    return this.document.paths[path]?.[method.toLowerCase()] !== undefined;
  }

  /**
   * How `body`, answered with `status` to `method path`, differs from the document: the status
   * must be documented for the operation (exactly, or by its class: `4XX`), the body must match.
   */
  checkAnswer(method: string, path: string, status: number, body: unknown): SpecViolation[] {
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    if (!operation) return [{ at: '', message: `${method} ${path} is not in the document` }];
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find(
      (candidate) => operation.responses[candidate] !== undefined,
    );
    if (key === undefined) {
      return [{ at: '', message: `${method} ${path} documents no ${status} answer` }];
    }
    const pointer = `#/paths/${escape(path)}/${method.toLowerCase()}/responses/${key}`;
    const response = this.resolveResponse(operation.responses[key], pointer);
    if (!response.schemaPointer) {
      return body === null || body === undefined || body === ''
        ? []
        : [{ at: '', message: `${method} ${path} ${status} documents no body` }];
    }
    return this.check(response.schemaPointer, body);
  }

  /** How `value` differs from the component schema `name` (e.g. `GuildChannelResponse`). */
  checkSchema(name: string, value: unknown): SpecViolation[] {
    if (!this.document.components.schemas[name]) throw new Error(`no schema ${name}`);
    return this.check(`#/components/schemas/${escape(name)}`, value);
  }

  /** A component schema, `$ref`s left as they are (they name other components). */
  schema(name: string): SpecSchema {
    const schema = this.document.components.schemas[name];
    if (!schema) throw new Error(`no schema ${name}`);
    return schema;
  }

  /** The component a `$ref` names (`#/components/schemas/X`). */
  resolve(ref: string): SpecSchema {
    const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
    if (!match) throw new Error(`unsupported $ref ${ref}`);
    return this.schema(match[1]);
  }

  /** The schema of an operation's answer (`200`), `$ref`s left as they are. */
  answerSchema(method: string, path: string, status = 200): SpecSchema {
    const response = this.document.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} has no ${status} JSON schema`);
    return schema;
  }

  private resolveResponse(
    response: SpecResponse,
    pointer: string,
  ): { schemaPointer: string | undefined } {
    if (response.$ref) {
      const name = /^#\/components\/responses\/(.+)$/.exec(response.$ref)?.[1];
      const target = name ? this.document.components.responses[name] : undefined;
      if (!name || !target) throw new Error(`unsupported $ref ${response.$ref}`);
      return this.resolveResponse(target, `#/components/responses/${escape(name)}`);
    }
    return {
      schemaPointer: response.content?.['application/json']?.schema
        ? `${pointer}/content/application~1json/schema`
        : undefined,
    };
  }

  private check(pointer: string, value: unknown): SpecViolation[] {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.getSchema(`${DOCUMENT_ID}${pointer}`);
      if (!validate) throw new Error(`no schema at ${pointer}`);
      this.validators.set(pointer, validate);
    }
    if (validate(value)) return [];
    return violations(validate.errors ?? []);
  }
}

/**
 * Ajv's errors, the most telling first: a `oneOf` of several shapes (a channel list's items) fails
 * in every branch; the errors deepest in the answer say what is wrong.
 */
function violations(errors: readonly ErrorObject[]): SpecViolation[] {
  const seen = new Set<string>();
  return [...errors]
    .sort((a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length)
    .map((error) => ({
      at: error.instancePath,
      message: `${error.message ?? error.keyword} (${error.schemaPath})`,
    }))
    .filter((v) => !seen.has(`${v.at} ${v.message}`) && seen.add(`${v.at} ${v.message}`));
}

function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Routes the emulator serves that the document does not describe, and why. */
export const NOT_IN_DOCUMENT: Readonly<Record<string, string>> = {
  'POST /oauth2/token':
    "OAuth2's token endpoint (RFC 6749): the document describes the REST API only",
  'POST /oauth2/token/revoke': "OAuth2's revocation endpoint (RFC 7009), as the token endpoint",
};

/** An answer of the emulator that differs from the document. */
export interface AnswerViolation extends SpecViolation {
  route: string;
  status: number;
}

/**
 * Checks every answer `emulator` sends from now on against the document (with the allowlist):
 * the route's documented answer for its status; for a route it does not serve, the platform's
 * error body. 5xx answers are not checked: the document describes none (Discord's are often not
 * even JSON). `violations()` lists what differed.
 */
export function checkEmulatorAnswers(emulator: {
  onAnswer(
    listener: (answer: { route: string; status: number; body: string | null }) => void,
  ): () => void;
}): { violations(): AnswerViolation[]; checked(): number; stop(): void } {
  const spec = DiscordSpec.get();
  const found: AnswerViolation[] = [];
  let checked = 0;
  const stop = emulator.onAnswer(({ route, status, body }) => {
    if (status >= 500 || NOT_IN_DOCUMENT[route] !== undefined) return;
    checked += 1;
    const [method, template] = route.split(' ', 2);
    const path = template.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const value: unknown = body === null || body === '' ? null : JSON.parse(body);
    const differences =
      template === ''
        ? spec.checkSchema('ErrorResponse', value)
        : spec.checkAnswer(method, path, status, value);
    found.push(...differences.map((difference) => ({ route, status, ...difference })));
  });
  return { violations: () => [...found], checked: () => checked, stop };
}
