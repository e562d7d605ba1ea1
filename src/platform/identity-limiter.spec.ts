import { ErrorCode } from 'src/common/errors/error-code';
import { BucketBusyError } from 'src/platform/bucket-queue';
import { IdentityLimiter } from 'src/platform/identity-limiter';
import type {
  IdentityId,
  IdentityWindows,
  WindowTake,
  WindowVerdict,
} from 'src/platform/identity-window';

const BOT: IdentityId = { key: 'bot', label: 'the bot token', perSecond: 50 };

/**
 * Windows that answer as told: `refuse` holds the refusal every take gets until `open()`, after
 * which the callers it names (in order) are let through one take each. Records who asked.
 */
function scripted(refusal: Exclude<WindowVerdict, { admitted: true }>): {
  windows: IdentityWindows;
  asked: string[];
  admitted: string[];
  open: () => void;
} {
  let closed = true;
  const asked: string[] = [];
  const admitted: string[] = [];
  const windows: IdentityWindows = {
    take: (_identity, caller) => {
      asked.push(caller);
      if (closed) return Promise.resolve<WindowTake>(refusal);
      admitted.push(caller);
      // One place frees at a time: the next take waits for the next room.
      closed = true;
      return Promise.resolve<WindowTake>({ admitted: true, place: { done: () => undefined } });
    },
  };
  return { windows, asked, admitted, open: () => (closed = false) };
}

describe('IdentityLimiter', () => {
  it('refuses at once a caller holding its share of a busy identity who asked more than a second of it', async () => {
    const { windows } = scripted({ admitted: false, retryAfterMs: 700, reason: 'share' });
    const limiter = new IdentityLimiter({ maxWaitMs: 60_000, fleet: windows });
    const small: IdentityId = { key: 'client', label: 'the bot token', perSecond: 2 };
    // Two asks (a second's worth) wait their turn; the third is a flood's.
    const waiting: Promise<unknown>[] = [];
    for (const n of [1, 2]) {
      waiting.push(limiter.acquire(small, 'user:flood').catch((e: unknown) => e));
      while (limiter.waiting < n) await new Promise((resolve) => setImmediate(resolve));
    }
    const error = (await limiter.acquire(small, 'user:flood').catch((e: unknown) => e)) as
      BucketBusyError | undefined;
    expect(error).toBeInstanceOf(BucketBusyError);
    expect(error?.code).toBe(ErrorCode.RateLimited);
    expect(error?.message).toBe(
      "The chat platform's rate limit for the bot token is shared by every user of this service and you hold your share of it while it is busy; retry in 1 seconds",
    );
    expect(error?.headers).toEqual({ 'Retry-After': 1 });
    // The flood's earlier calls, tried again, are refused as well once it asked too much.
    expect(limiter.refused).toBe(3 - limiter.waiting);
  });

  it('refuses at once a call whose wait for room would pass maxWaitMs', async () => {
    const { windows } = scripted({ admitted: false, retryAfterMs: 900, reason: 'full' });
    const limiter = new IdentityLimiter({ maxWaitMs: 500, fleet: windows });
    await expect(limiter.acquire(BOT, 'user:a')).rejects.toThrow(
      /the bot token is shared by every user of this service and 1 calls are ahead of yours; retry in 1 seconds/,
    );
    expect(limiter.waiting).toBe(0);
  });

  it('lets waiting calls through when room comes, the caller who asked least first', async () => {
    const script = scripted({ admitted: false, retryAfterMs: 5, reason: 'full' });
    const limiter = new IdentityLimiter({ maxWaitMs: 60_000, fleet: script.windows });
    // The heavy caller has asked three times already (each refused for want of room).
    const heavy = [1, 2, 3].map(() => limiter.acquire(BOT, 'user:heavy'));
    const light = limiter.acquire(BOT, 'ip:198.51.100.7');
    while (limiter.waiting < 4) await new Promise((resolve) => setImmediate(resolve));
    script.open();
    await light;
    expect(script.admitted).toEqual(['ip:198.51.100.7']);
    script.open();
    await heavy[0];
    expect(script.admitted).toEqual(['ip:198.51.100.7', 'user:heavy']);
    script.open();
    await heavy[1];
    script.open();
    await heavy[2];
    expect(limiter.waiting).toBe(0);
  });

  it("falls back to this instance's share of the rate when the fleet's windows fail, without waiting", async () => {
    const failing: IdentityWindows = { take: () => Promise.reject(new Error('Redis is down')) };
    const limiter = new IdentityLimiter({ maxWaitMs: 100, fleet: failing, fleetSize: () => 10 });
    // 50 a second over 10 instances: 5 here.
    const results = await Promise.allSettled(
      Array.from({ length: 7 }, (_, i) => limiter.acquire(BOT, `user:${i}`)),
    );
    expect(results.map((result) => result.status)).toEqual([
      ...Array<string>(5).fill('fulfilled'),
      'rejected',
      'rejected',
    ]);
  });
});
