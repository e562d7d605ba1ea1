import { createApp } from 'src/app.setup';
import { ConfigError, loadConfig, readProcessEnvironment } from 'src/config/app-config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(readProcessEnvironment());
  const app = await createApp(config);
  await app.listen(config.http.port, config.http.host);
}

bootstrap().catch((error: unknown) => {
  // A configuration problem is one clear line; anything else keeps its stack for the operator.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
