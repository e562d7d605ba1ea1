import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from 'src/app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter } from 'src/app.setup';
import { createRootLogger } from 'src/common/logging/app-logger';
import { withSettingRequestBodies } from 'src/settings/settings-openapi';
import { AppConfig, loadConfig, type Environment } from 'src/config/app-config';
import request, { type Agent } from 'supertest';
import { checkAnswersOf, committedDocument, ContractChecker } from 'test/support/contract';
import { LogCapture } from 'test/support/log-capture';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';

/** A fixed key so that tests on PostgreSQL (where the key is required) boot. */
export const TEST_TOKEN_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface TestAppOptions {
  /** Environment variables on top of the test defaults. */
  env?: Environment;
  /** Extra controllers mounted beside the application's (test fixtures). */
  controllers?: Type<unknown>[];
  /** Extra modules imported beside the application's (test fixtures). */
  imports?: Type<unknown>[];
  /** A database prepared by the test; by default a fresh one is created. */
  database?: TestDatabase;
  /**
   * `false`: the fresh database has no schema yet, as at a first start, so the migrations run at
   * boot (by default an embedded one starts from the migrated template).
   */
  migrated?: boolean;
}

export interface TestApp {
  readonly app: NestFastifyApplication;
  readonly config: AppConfig;
  readonly database: TestDatabase;
  readonly logs: LogCapture;
  /** The loopback port the application listens on (for raw HTTP clients). */
  readonly port: number;
  /** A supertest agent bound to the running application. */
  http(): Agent;
  close(): Promise<void>;
}

/**
 * Boots the real AppModule through the same `configureApp` as `main.ts`, on a fresh database (an
 * embedded data directory of its own, or a new PostgreSQL database when DATABASE_URL is set),
 * listening on a loopback port.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase({ migrated: options.migrated }));
  const config = loadConfig({
    ...database.env,
    TOKEN_ENCRYPTION_KEY: TEST_TOKEN_ENCRYPTION_KEY,
    REDIS_URL: process.env.REDIS_URL,
    // Test files share the CI's Redis: each application gets keys of its own.
    REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
    LOG_LEVEL: 'info',
    // Tests make many requests from one address; the rate-limit tests turn limits on.
    RATE_LIMITS_ENABLED: 'false',
    ...options.env,
  });
  const logs = new LogCapture();
  let app: NestFastifyApplication;
  try {
    app = await startApp(config, logs, options);
  } catch (error) {
    if (!options.database) await database.drop();
    throw error;
  }

  let closed = false;
  return {
    app,
    config,
    database,
    logs,
    port: (app.getHttpServer().address() as AddressInfo).port,
    http: () => request(app.getHttpServer()),
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
      await database.drop();
    },
  };
}

/**
 * Boots one application for the enclosing `describe` (before its tests, closed after them) and
 * returns an accessor for it.
 */
export function useTestApp(options: TestAppOptions = {}): () => TestApp {
  let testApp: TestApp | undefined;
  beforeAll(async () => {
    testApp = await createTestApp(options);
  });
  afterAll(async () => {
    await testApp?.close();
  });
  return () => {
    if (!testApp) throw new Error('the test application is not running (beforeAll failed?)');
    return testApp;
  };
}

async function startApp(
  config: AppConfig,
  logs: LogCapture,
  options: TestAppOptions,
): Promise<NestFastifyApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot(config), ...(options.imports ?? [])],
    controllers: options.controllers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(
    createHttpAdapter(config, createRootLogger(config.logLevel, logs)),
    APP_OPTIONS,
  );
  await configureApp(app);
  // Fixture modules may declare settings: their request schemas join the committed document's.
  let ownContract: ContractChecker | undefined;
  checkAnswersOf(
    app.getHttpAdapter().getInstance(),
    options.imports?.length
      ? () =>
          (ownContract ??= new ContractChecker(withSettingRequestBodies(committedDocument(), app)))
      : undefined,
  );
  await app.listen(0, '127.0.0.1');
  return app;
}
