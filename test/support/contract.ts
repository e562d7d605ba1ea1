import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every answer the e2e suite receives is checked against the committed OpenAPI document (which
 * `npm run openapi:check` keeps equal to the code): the status is documented for the operation,
 * documented headers are present and well-formed, the body matches the documented schema for its
 * content type, and a request body the server accepted is one the document allows. Violations are collected here and fail the test that caused them (see
 * `contract-setup.ts`).
 */

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: object;
}

interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema?: object }> };
  responses: Record<string, OperationResponse>;
}

interface OperationResponse {
  description: string;
  headers?: Record<string, { required?: boolean; schema?: object }>;
  content?: Record<string, { schema?: object }>;
}

/** One exchange as the server saw it. */
export interface Exchange {
  method: string;
  routeUrl: string;
  status: number;
  headers: Record<string, unknown>;
  body: string | null;
  /** The parsed request body, for a request that had one. */
  requestBody?: unknown;
}

const DOCUMENT_ID = 'openapi.json';

/** Routes outside the API: the docs themselves, the root leading to them, and test fixtures. */
const UNDOCUMENTED_PREFIXES = ['/docs', '/__probe'];
const UNDOCUMENTED_ROUTES = new Set(['/', '/openapi.json']);

/** The OpenAPI path of a Fastify route: `/guilds/:guild_id` → `/guilds/{guild_id}`. */
function openApiPath(routeUrl: string): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Checks exchanges against one OpenAPI document. */
export class ContractChecker {
  private readonly ajv = new Ajv({ allErrors: true, strict: true, discriminator: true });
  private readonly validators = new Map<string, ValidateFunction>();

  private readonly document: OpenApiDocument;

  /** `document`: an OpenAPI 3.0 document, generated (`createOpenApiDocument`) or parsed. */
  constructor(document: object) {
    this.document = document as OpenApiDocument;
    addFormats(this.ajv);
    // OpenAPI 3.0's annotations that JSON Schema draft-07 does not know, and the document's own
    // top-level fields: the document is added whole, so that `$ref`s resolve inside it.
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs']);
    this.ajv.addVocabulary([
      'openapi',
      'info',
      'servers',
      'paths',
      'components',
      'tags',
      'security',
    ]);
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  private validatorFor(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** What is wrong with one exchange, as the document sees it (empty when nothing is). */
  check(exchange: Exchange): string[] {
    const path = openApiPath(exchange.routeUrl);
    // HEAD is the server's GET without the body (Fastify answers it for every GET route).
    const method = exchange.method === 'HEAD' ? 'get' : exchange.method.toLowerCase();
    const label = `${exchange.method} ${path} → ${exchange.status}`;
    const operation = this.document.paths[path]?.[method];
    if (!operation) return [`${label}: the operation is not in the document`];
    const statusKey = String(exchange.status);
    const response = operation.responses[statusKey] ?? operation.responses.default;
    if (!response) return [`${label}: the status is not documented`];
    const operationPointer = `/paths/${escapePointer(path)}/${method}`;
    const responsePointer = `${operationPointer}/responses/${
      operation.responses[statusKey] ? statusKey : 'default'
    }`;
    return [
      ...this.requestProblems(exchange, operation, operationPointer, label),
      ...this.headerProblems(exchange, response, responsePointer, label),
      ...this.bodyProblems(exchange, response, responsePointer, label),
    ];
  }

  /** A body the server accepted (2xx) must be one the document allows. */
  private requestProblems(
    exchange: Exchange,
    operation: Operation,
    operationPointer: string,
    label: string,
  ): string[] {
    const accepted = exchange.status >= 200 && exchange.status < 300;
    if (!accepted || exchange.requestBody === undefined) return [];
    if (!operation.requestBody?.content['application/json']?.schema) {
      return [`${label}: a request body was accepted where none is documented`];
    }
    const validate = this.validatorFor(
      `${operationPointer}/requestBody/content/application~1json/schema`,
    );
    if (validate(exchange.requestBody)) return [];
    return [
      // A oneOf reports every alternative's errors: the request itself says more.
      `${label}: the server accepted a request body the document refuses: ${truncate(
        this.ajv.errorsText(validate.errors, { dataVar: 'request' }),
      )}; request: ${truncate(JSON.stringify(exchange.requestBody))}`,
    ];
  }

  private headerProblems(
    exchange: Exchange,
    response: OperationResponse,
    responsePointer: string,
    label: string,
  ): string[] {
    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = exchange.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${label}: header ${name} is missing`);
        continue;
      }
      if (!header.schema) continue;
      const validate = this.validatorFor(
        `${responsePointer}/headers/${escapePointer(name)}/schema`,
      );
      const typed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
      if (!validate(typed) && !validate(value)) {
        problems.push(
          `${label}: ${this.ajv.errorsText(validate.errors, { dataVar: `header ${name}` })}`,
        );
      }
    }
    return problems;
  }

  private bodyProblems(
    exchange: Exchange,
    response: OperationResponse,
    responsePointer: string,
    label: string,
  ): string[] {
    const rawType = exchange.headers['content-type'];
    const contentType = (typeof rawType === 'string' ? rawType : '').split(';')[0].trim();
    const hasBody =
      exchange.method !== 'HEAD' && exchange.body !== null && exchange.body.length > 0;
    if (!response.content) {
      return hasBody ? [`${label}: a body (${contentType}) where none is documented`] : [];
    }
    const media = response.content[contentType];
    if (!media) {
      return [
        `${label}: content type "${contentType}" is not documented (${Object.keys(response.content).join(', ')})`,
      ];
    }
    if (!media.schema || !contentType.includes('json') || !hasBody) return [];
    let body: unknown;
    try {
      body = JSON.parse(exchange.body ?? '');
    } catch {
      return [`${label}: the body is not JSON`];
    }
    const validate = this.validatorFor(
      `${responsePointer}/content/${escapePointer(contentType)}/schema`,
    );
    if (validate(body)) return [];
    return [
      `${label}: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}; body: ${truncate(exchange.body ?? '')}`,
    ];
  }
}

const committedText = readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8');

/** The committed document, which `npm run openapi:check` keeps equal to the code. */
export const committedContract = new ContractChecker(JSON.parse(committedText) as object);

/** A fresh copy of the committed document, for a test application to extend with its fixtures. */
export function committedDocument(): OpenAPIObject {
  return JSON.parse(committedText) as OpenAPIObject;
}

/** What is wrong with one exchange, as the committed document sees it. */
export function checkAnswer(exchange: Exchange): string[] {
  return committedContract.check(exchange);
}

const violations: string[] = [];

function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * Checks every answer of `server` from now on; call before it is ready. An application with test
 * fixtures of its own (an extra setting, say) passes the document that describes it (`contract`).
 */
export function checkAnswersOf(
  server: FastifyInstance,
  contract: () => ContractChecker = () => committedContract,
): void {
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
            ...contract().check({
              method: request.method,
              routeUrl,
              status: reply.statusCode,
              headers: reply.getHeaders(),
              body,
              requestBody: request.body ?? undefined,
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
