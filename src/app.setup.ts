import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from 'src/app.module';
import { answerFrameworkError } from 'src/common/errors/framework-errors';
import { requestIdFor, REQUEST_ID_HEADER } from 'src/common/logging/request-id';
import { AppConfig } from 'src/config/app-config';

export const API_TITLE = 'Bot Management Service API';
export const API_VERSION = '0.2.0';

/** The HTTP adapter: Fastify with the body limit and proxy trust from the configuration. */
export function createHttpAdapter(config: AppConfig): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: config.http.bodyLimitBytes,
    trustProxy: config.http.trustProxy,
    // Logging is done by pino-http through nestjs-pino, with request ids and redaction.
    logger: false,
    // Lets in-flight requests finish on shutdown while idle keep-alive sockets are closed.
    forceCloseConnections: 'idle',
    requestIdHeader: false,
    genReqId: requestIdFor,
    frameworkErrors: answerFrameworkError,
  });
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
  configureApp(app);
  return app;
}

/**
 * Everything applied to the application beyond its modules. `main.ts` and every e2e test call
 * this, so tests run the same HTTP stack as production.
 */
export function configureApp(app: NestFastifyApplication): void {
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  // Tokens travel in the Authorization header, never in cookies, so any origin may call the API.
  app.enableCors({
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: [REQUEST_ID_HEADER],
  });
  const fastify = app.getHttpAdapter().getInstance();
  // JSON only: any other content type is refused (415, rendered as BadRequest).
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
  });
  // While shutting down, answers close their connection, so keep-alive clients cannot hold the
  // process open after its in-flight requests are done.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', async (_request, reply) => {
    if (closing) void reply.header('Connection', 'close');
  });
  SwaggerModule.setup('docs', app, createOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
    customSiteTitle: API_TITLE,
    swaggerOptions: { persistAuthorization: true },
  });
}

/** The OpenAPI document generated from the controllers and DTOs (also written to openapi.json). */
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
    .build();
  return SwaggerModule.createDocument(app, config);
}
