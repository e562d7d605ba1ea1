import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from 'src/config/app-config';
import { DemoController } from 'src/platform/demo.controller';
import { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import { Metrics } from 'src/common/metrics/metrics';
import { createPlatformCache, PLATFORM_CACHE } from 'src/platform/platform-cache';
import { PlatformConnection } from 'src/platform/platform-connection';
import { RedisConnection } from 'src/common/redis/redis.module';
import {
  InvalidRequestBudget,
  type InvalidAnswerBudget,
} from 'src/platform/invalid-request-budget';
import { PlatformHttp } from 'src/platform/platform-http';
import { BucketQueues, DEFAULT_BUCKET_QUEUE_LIMITS } from 'src/platform/bucket-queue';
import { FleetBucketSlots } from 'src/platform/fleet-bucket-slots';
import { FleetIdentityWindows } from 'src/platform/fleet-identity-windows';
import { IdentityLimiter } from 'src/platform/identity-limiter';
import { SharedInvalidRequestBudget } from 'src/platform/shared-invalid-request-budget';
import { PlatformClient } from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';
import { Feature } from 'src/common/feature/feature.decorator';

/** Bounded retries: a request that depends on the platform answers within a few timeouts. */
const RETRIES = 2;
const RATE_LIMIT_RETRIES = 3;
const MAX_RATE_LIMIT_WAIT_MS = 10_000;
const BACKOFF_MS = 250;

/** The invalid-request budget the transport counts against (docs/platform.md). */
export const INVALID_REQUEST_BUDGET = Symbol('INVALID_REQUEST_BUDGET');

/** The chat-platform client, its caches and, in demo mode, the emulator it talks to. */
@Global()
@Feature({
  tags: { demo: 'Demo mode only: start here. Logging in as a demo user without the platform' },
})
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
          provide: INVALID_REQUEST_BUDGET,
          inject: [RedisConnection, AppConfig, Metrics],
          useFactory: (redis: RedisConnection, appConfig: AppConfig, metrics: Metrics) =>
            withBudgetGauge(
              metrics,
              redis.client
                ? new SharedInvalidRequestBudget(redis.client, {
                    limit: appConfig.platform.invalidRequestLimit,
                    keyPrefix: redis.keyPrefix,
                  })
                : new InvalidRequestBudget(appConfig.platform.invalidRequestLimit),
            ),
        },
        {
          provide: BucketQueues,
          inject: [RedisConnection, AppConfig, Metrics, IdentityLimiter],
          useFactory: (
            redis: RedisConnection,
            appConfig: AppConfig,
            metrics: Metrics,
            identities: IdentityLimiter,
          ) =>
            withQueueGauges(
              metrics,
              new BucketQueues(
                { ...DEFAULT_BUCKET_QUEUE_LIMITS, maxWaitMs: appConfig.platform.queueMaxWaitMs },
                () => performance.now(),
                redis.client ? new FleetBucketSlots(redis.client, redis.keyPrefix) : undefined,
                (ms) => metrics.platformQueueWait(ms / 1000),
                (identity, caller) => identities.othersWaiting(identity, caller),
              ),
            ),
        },
        {
          provide: IdentityLimiter,
          inject: [RedisConnection, AppConfig, Metrics, INVALID_REQUEST_BUDGET],
          useFactory: (
            redis: RedisConnection,
            appConfig: AppConfig,
            metrics: Metrics,
            budget: InvalidAnswerBudget,
          ) =>
            withIdentityGauges(
              metrics,
              new IdentityLimiter({
                maxWaitMs: appConfig.platform.queueMaxWaitMs,
                fleet: redis.client
                  ? new FleetIdentityWindows(redis.client, redis.keyPrefix)
                  : undefined,
                fleetSize: () =>
                  budget instanceof SharedInvalidRequestBudget ? budget.instances() : 1,
              }),
            ),
        },
        {
          provide: PlatformClient,
          inject: [
            PlatformConnection,
            AppConfig,
            Metrics,
            INVALID_REQUEST_BUDGET,
            BucketQueues,
            IdentityLimiter,
          ],
          useFactory: (
            connection: PlatformConnection,
            appConfig: AppConfig,
            metrics: Metrics,
            budget: InvalidAnswerBudget,
            queues: BucketQueues,
            identities: IdentityLimiter,
          ) =>
            new PlatformClient(
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
                budget,
                metrics,
                queues,
                identities,
              }),
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

/** The shared buckets' queues, read when the metrics are scraped. */
function withQueueGauges(metrics: Metrics, queues: BucketQueues): BucketQueues {
  metrics.gauge(
    'bms_platform_queue_waiting',
    'Calls waiting for their turn in the queues of the platform buckets the service shares (the bot token, the OAuth2 client)',
    () => queues.stats().waiting,
  );
  metrics.gauge(
    'bms_platform_queue_refused',
    'Calls the shared platform buckets’ queues refused (429) since the instance started',
    () => queues.stats().refused,
  );
  return queues;
}

/** The shared identities' rates, read when the metrics are scraped. */
function withIdentityGauges(metrics: Metrics, identities: IdentityLimiter): IdentityLimiter {
  metrics.gauge(
    'bms_platform_identity_waiting',
    'Calls waiting for room in the rate of a platform identity the fleet shares (the bot token, the OAuth2 token endpoint)',
    () => identities.waiting,
  );
  metrics.gauge(
    'bms_platform_identity_refused',
    'Calls refused (429) since the instance started because a platform identity the fleet shares had no room for them in time',
    () => identities.refused,
  );
  return identities;
}

/** The invalid-request budget's use, read when the metrics are scraped. */
function withBudgetGauge(metrics: Metrics, budget: InvalidAnswerBudget): InvalidAnswerBudget {
  metrics.gauge(
    'bms_platform_invalid_answers',
    "Invalid answers (401, 403, 429) from the platform in the last 10 minutes: the fleet's with Redis, else this instance's own",
    () => budget.count(),
  );
  metrics.gauge(
    'bms_platform_invalid_answers_limit',
    "The count at which platform calls are refused locally: PLATFORM_INVALID_REQUEST_LIMIT, or this instance's share of it while Redis cannot be reached",
    () => budget.threshold(),
  );
  return budget;
}
