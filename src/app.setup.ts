import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, getSchemaPath, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { HttpStatus } from '@nestjs/common';
import { ErrorResponseDto } from 'src/common/errors/error-response.dto';
import type { FastifyBaseLogger } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import { AppModule } from 'src/app.module';
import { prepareSessionRequests } from 'src/auth/session-request';
import { ErrorCode } from 'src/common/errors/error-code';
import { answerClientError, answerFrameworkError } from 'src/common/errors/framework-errors';
import { registerCorsPreflight, withCorsHeaders } from 'src/common/http/cors';
import { registerJsonBodyParser } from 'src/common/validation/json-body';
import { registerQueryTextCheck } from 'src/common/validation/query-text';
import { AccessLogController } from 'src/common/logging/access-log';
import { AppLogger, createRootLogger, requestContext } from 'src/common/logging/app-logger';
import { requestIdFor, REQUEST_ID_HEADER } from 'src/common/logging/request-id';
import { AppConfig } from 'src/config/app-config';
import { Metrics } from 'src/common/metrics/metrics';
import { SessionsService } from 'src/sessions/sessions.service';
import { withSettingRequestBodies } from 'src/settings/settings-openapi';

export const API_TITLE = 'Bot Management Service API';
export const API_VERSION = '0.2.0';

/**
 * The HTTP adapter: Fastify with the body limit and proxy trust from the configuration, and its
 * pino logger as the application's logger (`destination` lets tests capture the lines).
 */
export function createHttpAdapter(
  config: AppConfig,
  destination?: DestinationStream,
): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: config.http.bodyLimitBytes,
    // A client that stops sending mid-request is answered and dropped instead of holding a socket.
    requestTimeout: config.http.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, config.http.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(1_000, config.http.requestTimeoutMs / 2),
    },
    clientErrorHandler: answerClientError,
    // Fastify takes a hop count or the trusted proxies' addresses (never "trust everyone").
    trustProxy: trustedProxies(config),
    loggerInstance: createRootLogger(config.logLevel, destination),
    // One line per request, written when the response is finished, instead of Fastify's two; the
    // request id reaches every line through requestContext, so no child logger per request.
    logController: new AccessLogController(),
    childLoggerFactory: (logger: FastifyBaseLogger) => logger,
    // Lets in-flight requests finish on shutdown while idle keep-alive sockets are closed.
    forceCloseConnections: 'idle',
    // A request that reaches an open connection while draining is served (and told to close the
    // connection) rather than refused with Fastify's own 503 body: the database is closed only
    // after the HTTP server.
    return503OnClosing: false,
    // No Nest middleware is used: without middie no request pays for an empty middleware chain.
    skipMiddie: true,
    requestIdHeader: false,
    genReqId: requestIdFor,
    frameworkErrors: answerFrameworkError,
  });
}

function trustedProxies(config: AppConfig): false | number | string[] {
  const trust = config.http.trustProxy;
  return typeof trust === 'object' ? [...trust] : trust;
}

/** Options for creating the application, shared by `createApp` and the e2e tests. */
export const APP_OPTIONS: NestApplicationOptions = {
  bufferLogs: true,
  // The API speaks JSON only: Nest's form-body parser is not registered.
  bodyParser: false,
};

/** Creates the application exactly as it runs in production. */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(config),
    APP_OPTIONS,
  );
  await configureApp(app);
  return app;
}

/**
 * Everything applied to the application beyond its modules. `main.ts` and every e2e test call
 * this, so tests run the same HTTP stack as production.
 */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  app.useLogger(new AppLogger(fastify.log as Logger));
  // CORS on Fastify itself, not `app.enableCors()` (which copies every CORS header a second time
  // per response, for Nest middleware this service does not use): preflights here, every other
  // answer's headers in the request hook below.
  await registerCorsPreflight(fastify);
  prepareSessionRequests(fastify);
  // The HTTP service only (not the CLI, which shares the modules): tokens valid before a restart
  // pass an address refused for failed authentications.
  fastify.addHook('onReady', () => app.get(SessionsService).loadKnownTokens());
  // JSON only: any other content type is refused (415, rendered as BadRequest).
  fastify.removeContentTypeParser('text/plain');
  // Nesting is capped before parsing: 30,000 levels would overflow the validators' stack.
  registerJsonBodyParser(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    // Through Fastify's reply, not the raw response: one header set on the raw response sends
    // every other header of the answer through Node's slow per-header path.
    void reply.header(REQUEST_ID_HEADER, request.id);
    withCorsHeaders(reply);
    // Everything done for this request, to its end, logs with its id.
    requestContext.run({ requestId: request.id }, done);
  });
  // After the hook above: the refusal carries the request id and the CORS headers.
  registerQueryTextCheck(fastify);
  // While shutting down, answers close their connection, so keep-alive clients cannot hold the
  // process open after its in-flight requests are done.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('Connection', 'close');
    done(null, payload);
  });
  recordRequestMetrics(app);
  // Built on the first request for it: the settings' schemas are known once the modules are up.
  SwaggerModule.setup('docs', app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
    customSiteTitle: API_TITLE,
    swaggerOptions: { persistAuthorization: true },
  });
  // The service has no page of its own: its root leads to the interactive docs.
  fastify.get('/', (_request, reply) => reply.redirect('/docs', 302));
}

/**
 * Every answered request counted and timed by route template (never the path, which holds ids),
 * method and status, when metrics are on (METRICS_PORT).
 */
function recordRequestMetrics(app: NestFastifyApplication): void {
  const metrics = app.get(Metrics);
  if (!metrics.enabled) return;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
}

/**
 * The OpenAPI document generated from the controllers, the DTOs and the registered settings (also
 * written to openapi.json). Needs the initialized application.
 */
export function createOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setVersion(API_VERSION)
    .setDescription(
      'HTTP/JSON API behind a Discord moderation bot. Errors are always `{message, code}` JSON.',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The token itself as the whole header value (what existing clients send).',
      },
      'PublicAuth',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque token',
        description: '`Authorization: Bearer <token>`',
      },
      'UserAuth',
    )
    // Relative: the service's own origin, wherever it runs (the document is served by it).
    .addServer('/', 'This service');
  for (const [name, description] of Object.entries(TAGS)) config.addTag(name, description);
  const document = SwaggerModule.createDocument(app, config.build());
  return withSettingRequestBodies(
    withoutLoneAllOf(
      withQueryTextRefusal(
        withBodyLimit(
          withDescribedSuccess(withExplicitSecurity(withoutRepeatedSecurity(document))),
        ),
      ),
    ),
    app,
  );
}

/** Every tag the operations use, with what it groups. */
const TAGS: Readonly<Record<string, string>> = {
  auth: 'Logging in with the chat platform (OAuth2)',
  sessions: 'Login sessions and API tokens',
  guilds: "The user's guilds, with roles, channels and effective permissions",
  settings:
    "A guild's settings: schemas, and the View, Create, Update, Delete and Reorder operations",
  stats: "The bot's shards and reach",
  commands: "The bot's command catalog",
  events:
    "Server-Sent Events: a guild's settings changes and the bot's health, pushed as they happen",
  config: 'Public configuration for clients',
  health: 'Liveness and readiness probes',
  demo: 'Demo mode only: logging in as a demo user without the platform',
};

type Operations = Record<string, { security?: object[]; summary?: string; responses?: object }>;

function operationsOf(document: OpenAPIObject): Operations[] {
  return Object.values(document.paths) as Operations[];
}

/**
 * An operation without a security requirement is public (`@Public()`): it says so with
 * `security: []`, which strict tools require instead of an absent list.
 */
function withExplicitSecurity(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) operation.security ??= [];
  }
  return document;
}

/**
 * The generator wraps a property's `$ref` to a named enum in an `allOf` of one, which means the
 * `$ref` itself: written as the `$ref` where nothing stands beside it.
 */
function withoutLoneAllOf(document: OpenAPIObject): OpenAPIObject {
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    const properties = (schema as { properties?: Record<string, Record<string, unknown>> })
      .properties;
    for (const [name, property] of Object.entries(properties ?? {})) {
      const { allOf, ...beside } = property as { allOf?: unknown[] };
      if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(beside).length === 0) {
        properties![name] = allOf[0] as Record<string, unknown>;
      }
    }
  }
  return document;
}

/** Every operation that takes a body may answer 413 for one over the body limit (DESIGN §3). */
function withBodyLimit(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem) as {
      requestBody?: object;
      responses?: object;
    }[]) {
      if (!operation.requestBody) continue;
      (operation.responses as Record<string, object>)[String(HttpStatus.PAYLOAD_TOO_LARGE)] = {
        description: 'Error: BadRequest (the body is over the size limit)',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponseDto) },
            example: {
              message: 'Request body is too large (the limit is 100 KiB)',
              code: 'BadRequest',
            },
          },
        },
      };
    }
  }
  return document;
}

/**
 * Every operation may answer 400 for a query string holding text the database refuses (NUL, a lone
 * surrogate): refused for every route in one place (`registerQueryTextCheck`), whether or not the
 * route reads its query.
 */
function withQueryTextRefusal(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      const responses = (operation.responses ?? {}) as Record<string, object>;
      responses[String(HttpStatus.BAD_REQUEST)] ??= {
        description: 'Error: BadRequest',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponseDto) },
            examples: { BadRequest: { value: { message: '…', code: ErrorCode.BadRequest } } },
          },
        },
      };
    }
  }
  return document;
}

/** A success response the code leaves undescribed is described by its operation's summary. */
function withDescribedSuccess(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      const responses = (operation.responses ?? {}) as Record<string, { description?: string }>;
      for (const [status, response] of Object.entries(responses)) {
        if (status.startsWith('2') && !response.description) {
          response.description = operation.summary ?? 'Success';
        }
      }
    }
  }
  return document;
}

/**
 * Security requirements declared on both a controller and one of its routes are listed twice by
 * the generator; a repeated alternative means nothing, so each is kept once.
 */
function withoutRepeatedSecurity(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      if (!Array.isArray(operation?.security)) continue;
      const seen = new Set<string>();
      operation.security = operation.security.filter((requirement) => {
        const key = JSON.stringify(requirement);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
  }
  return document;
}
