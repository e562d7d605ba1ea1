import { Logger } from '@nestjs/common';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed, SeedGuild } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { DEFAULT_INVALID_REQUEST_LIMIT } from 'src/config/app-config';
import { InvalidRequestBudget } from 'src/platform/invalid-request-budget';
import { PlatformHttp, type PlatformHttpOptions } from 'src/platform/platform-http';
import { BucketQueues, DEFAULT_BUCKET_QUEUE_LIMITS } from 'src/platform/bucket-queue';
import { IdentityLimiter } from 'src/platform/identity-limiter';
import { PlatformClient } from 'src/platform/platform.client';
import { faultsOf } from 'test/support/emulator-faults';

export const DEMO_REDIRECT = 'http://localhost:3000/docs/oauth2-redirect.html';

/** A client wired to an emulator, with timings small enough for tests. */
export function clientFor(
  emulator: { apiUrl: string },
  overrides: Partial<PlatformHttpOptions> = {},
): PlatformClient {
  const http = new PlatformHttp({
    apiUrl: emulator.apiUrl,
    botToken: DEMO_SEED.application.bot_token,
    clientId: DEMO_SEED.application.id,
    clientSecret: DEMO_SEED.application.secret,
    timeoutMs: 2_000,
    retries: 2,
    rateLimitRetries: 3,
    maxRateLimitWaitMs: 5_000,
    backoffMs: 20,
    budget: new InvalidRequestBudget(DEFAULT_INVALID_REQUEST_LIMIT),
    queues: new BucketQueues({ ...DEFAULT_BUCKET_QUEUE_LIMITS, maxWaitMs: 2_000 }),
    identities: new IdentityLimiter({ maxWaitMs: 2_000 }),
    ...overrides,
  });
  return new PlatformClient(http, DEMO_SEED.application.id);
}

/** A guild with the bot and Alice (its owner) in it, for a seed or for the bot to join. */
export function botAndAliceGuild(id: string): SeedGuild {
  return {
    id,
    name: `guild ${id}`,
    icon: null,
    owner_id: DEMO_IDS.alice,
    roles: [{ id, name: '@everyone', permissions: '0', position: 0 }],
    channels: [],
    members: [
      { user_id: DEMO_IDS.bot, roles: [], joined_at: '2024-01-01T00:00:00.000Z' },
      { user_id: DEMO_IDS.alice, roles: [], joined_at: '2024-01-01T00:00:00.000Z' },
    ],
  };
}

/** The environment of a service that talks to `emulator` as to the real platform (not demo mode). */
export function liveModeEnv(emulator: { apiUrl: string }): Record<string, string> {
  return {
    DISCORD_BOT_TOKEN: DEMO_SEED.application.bot_token,
    DISCORD_CLIENT_ID: DEMO_SEED.application.id,
    DISCORD_CLIENT_SECRET: DEMO_SEED.application.secret,
    DISCORD_API_URL: emulator.apiUrl,
  };
}

/** Starts an emulator for the enclosing `describe` and returns an accessor for it. */
export function useEmulator(seed: EmulatorSeed = DEMO_SEED): () => PlatformEmulator {
  let emulator: PlatformEmulator | undefined;
  beforeAll(async () => {
    // No application here to own the logs: retries' warnings would only clutter the output.
    Logger.overrideLogger(false);
    emulator = await PlatformEmulator.start(seed);
  });
  afterEach(() => {
    if (emulator) faultsOf(emulator).clear();
  });
  afterAll(async () => {
    await emulator?.close();
  });
  return () => {
    if (!emulator) throw new Error('the emulator is not running');
    return emulator;
  };
}

/**
 * Captures what the Nest loggers write, one JSON text per call, until `stop()`, after which logs go
 * quiet again (as `useEmulator` leaves them).
 */
export function captureLogs(): { stop: () => string[] } {
  const lines: string[] = [];
  const keep = (...args: unknown[]): void => {
    lines.push(JSON.stringify(args));
  };
  Logger.overrideLogger({
    log: keep,
    error: keep,
    warn: keep,
    debug: keep,
    verbose: keep,
    fatal: keep,
  });
  return {
    stop: () => {
      Logger.overrideLogger(false);
      return lines;
    },
  };
}
