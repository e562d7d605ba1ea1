import type { IncomingMessage, ServerResponse } from 'node:http';
import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { destination as stdoutDestination, type DestinationStream } from 'pino';
import { AppConfig } from 'src/config/app-config';

const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Where log lines go: stdout, unless a test captures them. Writes are synchronous so that nothing
 * is lost when the process ends on a signal right after shutting down.
 */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

@Global()
@Module({
  providers: [
    { provide: LOG_DESTINATION, useFactory: () => stdoutDestination({ dest: 1, sync: true }) },
  ],
  exports: [LOG_DESTINATION],
})
class LogDestinationModule {}

/**
 * Structured JSON logs (pino) with the request id on every line of a request. Requests are logged
 * without headers or bodies, so tokens and secrets never reach the log.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      imports: [LogDestinationModule],
      inject: [AppConfig, LOG_DESTINATION],
      useFactory: (config: AppConfig, destination: DestinationStream) => ({
        pinoHttp: [
          {
            level: config.logLevel,
            // The request id is Fastify's (see request-id.ts), so every line of a request carries it.
            customAttributeKeys: { reqId: 'request_id' },
            quietReqLogger: true,
            formatters: { level: (label: string) => ({ level: label }) },
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                // The query string can carry codes or ids; the path is enough to follow a request.
                path: req.url.split('?')[0],
              }),
              res: (res: { statusCode: number }) => ({ status: res.statusCode }),
            },
            // Belt and braces: should a header object ever be logged, its credentials are removed.
            redact: {
              paths: [
                'req.headers.authorization',
                'req.headers.cookie',
                'headers.authorization',
                'headers.cookie',
                '*.token',
                '*.access_token',
                '*.refresh_token',
                '*.client_secret',
              ],
              censor: '[redacted]',
            },
            autoLogging: {
              // Probes are polled every few seconds; logging them would drown real traffic.
              ignore: (req: IncomingMessage & { originalUrl?: string }) =>
                PROBE_PATHS.has(req.originalUrl ?? req.url ?? ''),
            },
            customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
              err || res.statusCode >= 500 ? 'error' : 'info',
          },
          destination,
        ],
      }),
    }),
  ],
})
export class LoggingModule {}
