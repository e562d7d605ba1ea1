import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every answer the e2e suite receives is checked against the committed OpenAPI document (which
 * `npm run openapi:check` keeps equal to the code): the status is documented for the operation,
 * documented headers are present and well-formed, and the body matches the documented schema for
 * its content type. Violations are collected here and fail the test that caused them (see
 * `contract-setup.ts`).
 */

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: object;
}

interface Operation {
  operationId: string;
  responses: Record<string, OperationResponse>;
}

interface OperationResponse {
  description: string;
  headers?: Record<string, { required?: boolean; schema?: object }>;
  content?: Record<string, { schema?: object }>;
}

const DOCUMENT_ID = 'openapi.json';

/** Routes outside the API: the docs themselves, the root leading to them, and test fixtures. */
const UNDOCUMENTED_PREFIXES = ['/docs', '/__probe'];
const UNDOCUMENTED_ROUTES = new Set(['/', '/openapi.json']);

const document = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'),
) as OpenApiDocument;

const ajv = new Ajv({ allErrors: true, strict: true, discriminator: true });
addFormats(ajv);
// OpenAPI 3.0's annotations that JSON Schema draft-07 does not know, and the document's own
// top-level fields: the document is added whole, so that `$ref`s resolve inside it.
ajv.addVocabulary(['example', 'xml', 'externalDocs']);
ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components', 'tags', 'security']);
ajv.addSchema(document, DOCUMENT_ID);

const validators = new Map<string, ValidateFunction>();
const violations: string[] = [];

/** The OpenAPI path of a Fastify route: `/guilds/:guild_id` → `/guilds/{guild_id}`. */
function openApiPath(routeUrl: string): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function validatorFor(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** What is wrong with one answer, as the document sees it (empty when nothing is). */
export function checkAnswer(answer: {
  method: string;
  routeUrl: string;
  status: number;
  headers: Record<string, unknown>;
  body: string | null;
}): string[] {
  const path = openApiPath(answer.routeUrl);
  // HEAD is the server's GET without the body (Fastify answers it for every GET route).
  const method = answer.method === 'HEAD' ? 'get' : answer.method.toLowerCase();
  const label = `${answer.method} ${path} → ${answer.status}`;
  const operation = document.paths[path]?.[method];
  if (!operation) return [`${label}: the operation is not in the document`];
  const statusKey = String(answer.status);
  const response = operation.responses[statusKey] ?? operation.responses.default;
  if (!response) return [`${label}: the status is not documented`];
  const problems: string[] = [];
  const responsePointer = `/paths/${escapePointer(path)}/${method}/responses/${
    operation.responses[statusKey] ? statusKey : 'default'
  }`;

  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = answer.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`${label}: header ${name} is missing`);
      continue;
    }
    if (!header.schema) continue;
    const validate = validatorFor(`${responsePointer}/headers/${escapePointer(name)}/schema`);
    const typed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    if (!validate(typed) && !validate(value)) {
      problems.push(`${label}: ${ajv.errorsText(validate.errors, { dataVar: `header ${name}` })}`);
    }
  }

  const rawType = answer.headers['content-type'];
  const contentType = (typeof rawType === 'string' ? rawType : '').split(';')[0].trim();
  const hasBody = answer.method !== 'HEAD' && answer.body !== null && answer.body.length > 0;
  if (!response.content) {
    if (hasBody) problems.push(`${label}: a body (${contentType}) where none is documented`);
    return problems;
  }
  const media = response.content[contentType];
  if (!media) {
    problems.push(
      `${label}: content type "${contentType}" is not documented (${Object.keys(response.content).join(', ')})`,
    );
    return problems;
  }
  if (!media.schema || !contentType.includes('json') || !hasBody) return problems;
  let body: unknown;
  try {
    body = JSON.parse(answer.body ?? '');
  } catch {
    problems.push(`${label}: the body is not JSON`);
    return problems;
  }
  const validate = validatorFor(`${responsePointer}/content/${escapePointer(contentType)}/schema`);
  if (!validate(body)) {
    problems.push(
      `${label}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}; body: ${truncate(answer.body ?? '')}`,
    );
  }
  return problems;
}

function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Checks every answer of `server` from now on; call before it is ready. */
export function checkAnswersOf(server: FastifyInstance): void {
  server.addHook(
    'onSend',
    (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      const routeUrl = request.routeOptions.url;
      const documented =
        routeUrl !== undefined &&
        // CORS preflights: the CORS plugin answers them on every path, outside the API.
        request.method !== 'OPTIONS' &&
        !UNDOCUMENTED_ROUTES.has(routeUrl) &&
        !UNDOCUMENTED_PREFIXES.some((prefix) => routeUrl.startsWith(prefix));
      if (documented) {
        const body =
          typeof payload === 'string'
            ? payload
            : Buffer.isBuffer(payload)
              ? payload.toString('utf8')
              : null;
        try {
          violations.push(
            ...checkAnswer({
              method: request.method,
              routeUrl,
              status: reply.statusCode,
              headers: reply.getHeaders(),
              body,
            }),
          );
        } catch (error) {
          violations.push(`${request.method} ${routeUrl}: the check failed: ${String(error)}`);
        }
      }
      done(null, payload);
    },
  );
}

/** The violations seen since the last call, which clears them. */
export function takeViolations(): string[] {
  return violations.splice(0, violations.length);
}
