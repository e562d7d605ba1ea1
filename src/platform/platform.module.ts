import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from 'src/config/app-config';
import { DemoController } from 'src/platform/demo.controller';
import { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import { Metrics } from 'src/common/metrics/metrics';
import { createPlatformCache, PLATFORM_CACHE } from 'src/platform/platform-cache';
import { PlatformConnection } from 'src/platform/platform-connection';
import { DEFAULT_INVALID_REQUEST_LIMIT, PlatformHttp } from 'src/platform/platform-http';
import { PlatformClient } from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';

/** Bounded retries: a request that depends on the platform answers within a few timeouts. */
const RETRIES = 2;
const RATE_LIMIT_RETRIES = 3;
const MAX_RATE_LIMIT_WAIT_MS = 10_000;
const BACKOFF_MS = 250;

/** The chat-platform client, its caches and, in demo mode, the emulator it talks to. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: PlatformModule,
      controllers: config.platform.demoMode ? [DemoController] : [],
      providers: [
        {
          provide: PlatformConnection,
          inject: [AppConfig],
          useFactory: (appConfig: AppConfig) => PlatformConnection.open(appConfig),
        },
        {
          provide: PlatformClient,
          inject: [PlatformConnection, AppConfig, Metrics],
          useFactory: (connection: PlatformConnection, appConfig: AppConfig, metrics: Metrics) =>
            new PlatformClient(
              withBudgetGauge(
                metrics,
                new PlatformHttp({
                  apiUrl: connection.apiUrl,
                  restProxyApiUrl: appConfig.platform.restProxyApiUrl,
                  botToken: connection.botToken,
                  clientId: connection.clientId,
                  clientSecret: connection.clientSecret,
                  timeoutMs: appConfig.platform.timeoutMs,
                  retries: RETRIES,
                  rateLimitRetries: RATE_LIMIT_RETRIES,
                  maxRateLimitWaitMs: MAX_RATE_LIMIT_WAIT_MS,
                  backoffMs: BACKOFF_MS,
                  metrics,
                }),
              ),
              connection.clientId,
            ),
        },
        {
          provide: PLATFORM_CACHE,
          inject: [SharedCacheFactory, AppConfig],
          useFactory: createPlatformCache,
        },
        PlatformService,
      ],
      exports: [PlatformConnection, PlatformClient, PLATFORM_CACHE, PlatformService],
    };
  }
}

/** The invalid-request budget's use, read when the metrics are scraped. */
function withBudgetGauge(metrics: Metrics, http: PlatformHttp): PlatformHttp {
  metrics.gauge(
    'bms_platform_invalid_answers',
    `Invalid answers (401, 403, 429) from the platform in the last 10 minutes; calls are refused locally at ${DEFAULT_INVALID_REQUEST_LIMIT}`,
    () => http.invalidAnswersCounted(),
  );
  return http;
}
