import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { createApp } from 'src/app.setup';
import { flushLogs } from 'src/common/logging/app-logger';
import { ConfigError, loadConfig, readProcessEnvironment } from 'src/config/app-config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(readProcessEnvironment());
  const app = await createApp(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void shutdown(app));
  }
  await app.listen(config.http.port, config.http.host);
  const logger = app.getHttpAdapter().getInstance().log as Logger;
  // The bound address, not the configured one: PORT=0 asks for any free port.
  const { address, port } = app.getHttpServer().address() as AddressInfo;
  logger.info({ runtime: `Node.js ${process.version}`, host: address, port }, 'Service started');
}

/** Stops accepting connections, lets in-flight requests finish, closes everything, then exits. */
async function shutdown(app: NestFastifyApplication): Promise<void> {
  const logger = app.getHttpAdapter().getInstance().log as Logger;
  let code = 0;
  try {
    await app.close();
  } catch (error) {
    logger.error({ err: error }, 'Shutdown failed');
    code = 1;
  }
  await flushLogs(logger);
  process.exit(code);
}

bootstrap().catch((error: unknown) => {
  // A configuration problem is one clear line; anything else keeps its stack for the operator.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
