import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { createRootLogger, endLogs, flushLogs } from 'src/common/logging/app-logger';
import { SERVICE_VERSION } from 'src/common/service-version';
import { assertCanListen, listenFailure, StartupFailure } from 'src/common/startup/startup-failure';
import type { Tracing } from 'src/common/tracing/tracing';
import { ConfigError, loadConfig, readProcessEnvironment } from 'src/config/app-config';

/** The service's log, once the configuration has said at which level. */
let logger: Logger | undefined;

async function bootstrap(): Promise<void> {
  const config = loadConfig(readProcessEnvironment());
  logger = createRootLogger(config.logLevel);
  // A port in use is said in one line before the database boots, not after it.
  await assertCanListen(config.http);
  // Before the application is loaded: tracing patches the database and Redis clients as they load.
  // Loaded only when on: OpenTelemetry's SDK adds about half a second and 30 MB to a boot.
  const tracing = config.tracing.enabled
    ? (await import('./common/tracing/tracing')).startTracing(config.tracing, SERVICE_VERSION, {
        logger,
      })
    : null;
  const { createApp } = await import('./app.setup');
  const { DatabaseEngine } = await import('./database/database.module');
  const app = await createApp(config, logger);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void shutdown(app, tracing, logger as Logger));
  }
  const { host, port } = config.http;
  await app.listen(port, host).catch((error: unknown) => {
    throw listenFailure(error, { host, port });
  });
  app.get(DatabaseEngine).shareWithCli();
  // The bound address, not the configured one: PORT=0 asks for any free port.
  const bound = app.getHttpServer().address() as AddressInfo;
  logger.info(
    { runtime: `Node.js ${process.version}`, host: bound.address, port: bound.port },
    'Service started',
  );
}

/**
 * Stops accepting connections, lets in-flight requests finish, closes everything, sends the spans
 * still buffered, then exits.
 */
async function shutdown(
  app: NestFastifyApplication,
  tracing: Tracing | null,
  log: Logger,
): Promise<void> {
  let code = 0;
  try {
    await app.close();
  } catch (error) {
    log.error({ err: error }, 'Shutdown failed');
    code = 1;
  }
  await tracing?.shutdown().catch((error: unknown) => {
    log.warn({ err: error, context: 'OpenTelemetry' }, 'Spans still buffered could not be sent');
  });
  await flushLogs(log);
  process.exit(code);
}

/**
 * A boot that fails ends with one line: an invalid configuration as plain text (the log's level
 * may be what is wrong); anything else as the log's `fatal` line, in words where the cause is known
 * (StartupFailure) and with its stack where it is not (a defect to report).
 */
async function failBoot(error: unknown): Promise<never> {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  // A failure while the configuration was read (its key file, say) logs at the default level.
  logger ??= createRootLogger('info');
  if (error instanceof StartupFailure) {
    logger.fatal(error.message);
  } else {
    logger.fatal({ err: error }, `The service could not start: ${(error as Error).message}`);
  }
  // The fatal line is the last: modules still starting beside the one that failed log nothing more,
  // through the root or any child of it (Fastify's).
  endLogs(logger);
  await flushLogs(logger);
  process.exit(1);
}

bootstrap().catch(failBoot);
