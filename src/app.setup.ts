import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from 'src/app.module';
import { prepareSessionRequests } from 'src/auth/session-request';
import { answerClientError, answerFrameworkError } from 'src/common/errors/framework-errors';
import { applyRouteBodyLimits } from 'src/common/http/body-limit';
import { registerCorsPreflight, withCorsHeaders } from 'src/common/http/cors';
import { isDocsPath, withDocsPolicy, withSecurityHeaders } from 'src/common/http/security-headers';
import { registerJsonBodyParser } from 'src/common/validation/json-body';
import { registerQueryTextCheck } from 'src/common/validation/query-text';
import { AccessLogController } from 'src/common/logging/access-log';
import { AppLogger, createRootLogger } from 'src/common/logging/app-logger';
import { requestContext } from 'src/common/http/request-context';
import { traceRequests } from 'src/common/tracing/request-spans';
import { requestIdFor, REQUEST_ID_HEADER } from 'src/common/http/request-id';
import { AppConfig } from 'src/config/app-config';
import { Metrics } from 'src/common/metrics/metrics';
import { SessionsService } from 'src/sessions/sessions.service';
import { API_TITLE, createOpenApiDocument, withLoginRedirect } from 'src/app.openapi';

/**
 * The HTTP adapter: Fastify with the body limit and proxy trust from the configuration, and its
 * pino logger as the application's logger (tests hand in one that captures the lines).
 */
export function createHttpAdapter(
  config: AppConfig,
  logger: Logger = createRootLogger(config.logLevel),
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
    loggerInstance: logger,
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
  // A failed boot is thrown to its caller (main.ts writes it as one line), not ended by Nest.
  abortOnError: false,
  // The API speaks JSON only: Nest's form-body parser is not registered.
  bodyParser: false,
};

/** Creates the application exactly as it runs in production. */
export async function createApp(
  config: AppConfig,
  logger: Logger,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(config, logger),
    {
      ...APP_OPTIONS,
      // From the first line on, in the log's own format and as they happen: a boot that stops
      // early shows how far it got.
      logger: new AppLogger(logger),
    },
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
  // First, so that every later hook and the handler run in the request's span.
  if (app.get(AppConfig).tracing.enabled) traceRequests(fastify);
  // The HTTP service only (not the CLI, which shares the modules): tokens valid before a restart
  // pass an address refused for failed authentications.
  fastify.addHook('onReady', () => app.get(SessionsService).loadKnownTokens());
  // Routes declared with `@BodyLimit` take their own; every other keeps the adapter's.
  applyRouteBodyLimits(fastify);
  // JSON only: any other content type is refused (415, rendered as BadRequest).
  fastify.removeContentTypeParser('text/plain');
  // Nesting is capped before parsing: 30,000 levels would overflow the validators' stack.
  registerJsonBodyParser(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    // Through Fastify's reply, not the raw response: one header set on the raw response sends
    // every other header of the answer through Node's slow per-header path.
    void reply.header(REQUEST_ID_HEADER, request.id);
    withCorsHeaders(reply);
    withSecurityHeaders(reply);
    if (isDocsPath(request.url)) withDocsPolicy(reply);
    // Everything done for this request, to its end, logs with its id.
    // Its platform calls are charged to its address until it is authenticated.
    requestContext.run({ requestId: request.id, ip: request.ip }, done);
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
  const redirectUri = app.get(AppConfig).oauth2.allowedRedirects[0];
  SwaggerModule.setup(
    'docs',
    app,
    () => withLoginRedirect(createOpenApiDocument(app), redirectUri),
    {
      jsonDocumentUrl: 'openapi.json',
      raw: ['json'],
      customSiteTitle: API_TITLE,
      swaggerOptions: { persistAuthorization: true },
    },
  );
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
