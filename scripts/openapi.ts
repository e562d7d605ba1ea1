import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from 'src/app.module';
import { createOpenApiDocument } from 'src/app.openapi';
import { createHttpAdapter } from 'src/app.setup';
import { loadConfig } from 'src/config/app-config';

/**
 * Writes the OpenAPI document generated from the code to openapi.json, or with `--check` fails when
 * the committed file differs from it. The application is initialized (on a throwaway embedded
 * database, in demo mode, not listening) because the settings' schemas come from the registry the
 * modules fill at init.
 */
async function main(): Promise<void> {
  const config = loadConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'error' });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(config),
    { logger: false, abortOnError: false },
  );
  await app.init();
  const generated = `${JSON.stringify(createOpenApiDocument(app), null, 2)}\n`;
  await app.close();

  const path = join(__dirname, '..', '..', 'openapi.json');
  if (!process.argv.includes('--check')) {
    writeFileSync(path, generated);
    console.log(`Wrote ${path}`);
    return;
  }
  const committed = readFileSync(path, 'utf8');
  if (committed !== generated) {
    console.error('openapi.json is out of date: run `npm run openapi` and commit the result');
    process.exit(1);
  }
  console.log('openapi.json matches the code');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
