import { ErrorCode } from 'src/common/errors/error-code';
import {
  BucketBusyError,
  BucketQueues,
  DEFAULT_BUCKET_QUEUE_LIMITS,
} from 'src/platform/bucket-queue';
import { IdentityLimiter, MAX_IDENTITY_WAITERS } from 'src/platform/identity-limiter';
import { eventually } from 'test/support/eventually';
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
      return Promise.resolve<WindowTake>({
        admitted: true,
        place: { done: () => undefined, giveBack: () => undefined },
      });
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
      /the bot token is shared by every user of this service and no turn would come within 500 ms; retry in 1 seconds/,
    );
    expect(limiter.waiting).toBe(0);
  });

  it('lets no more than MAX_IDENTITY_WAITERS calls wait on an instance, refusing the next at once', async () => {
    const { windows } = scripted({ admitted: false, retryAfterMs: 5, reason: 'full' });
    const limiter = new IdentityLimiter({ maxWaitMs: 600_000, fleet: windows });
    // A fast identity, so that a thousand calls ahead is still a short wait: only the bound refuses.
    const fast: IdentityId = { key: 'fast', label: 'the bot token', perSecond: 100_000 };
    const waiting = Array.from({ length: MAX_IDENTITY_WAITERS }, (_, i) =>
      limiter.acquire(fast, `user:${i}`).catch((e: unknown) => e),
    );
    while (limiter.waiting < MAX_IDENTITY_WAITERS) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect(limiter.acquire(fast, 'user:one-more')).rejects.toThrow(
      `the bot token is shared by every user of this service and ${MAX_IDENTITY_WAITERS} calls are waiting for it`,
    );
    expect(limiter.waiting).toBe(MAX_IDENTITY_WAITERS);
    expect(waiting).toHaveLength(MAX_IDENTITY_WAITERS);
  });

  it('lets waiting calls through when room comes, the caller who asked least first', async () => {
    // Refused with no wait: every waiter is due whenever the limiter looks (with a wait, one
    // refused a moment later would be due a moment later, and a look between would skip it).
    const script = scripted({ admitted: false, retryAfterMs: 0, reason: 'full' });
    const limiter = new IdentityLimiter({ maxWaitMs: 60_000, fleet: script.windows });
    // The heavy caller has asked three times already (each refused for want of room).
    const heavy = [1, 2, 3].map(() => limiter.acquire(BOT, 'user:heavy'));
    const light = limiter.acquire(BOT, 'ip:198.51.100.7');
    while (limiter.waiting < 4) await new Promise((resolve) => setImmediate(resolve));
    script.open();
    await light;
    expect(script.admitted).toEqual(['ip:198.51.100.7']);
    // Then the heavy caller's calls, one place each time room comes.
    for (const count of [2, 3, 4]) {
      script.open();
      await eventually(
        () => Promise.resolve(script.admitted.length),
        (length) => length >= count,
      );
    }
    await Promise.all(heavy);
    expect(script.admitted).toEqual(['ip:198.51.100.7', 'user:heavy', 'user:heavy', 'user:heavy']);
    expect(limiter.waiting).toBe(0);
  });

  it('lets through a call that came to wait while room was being asked for another', async () => {
    // The fleet's windows answer when told (Redis is a round trip away).
    const answers: ((take: WindowTake) => void)[] = [];
    const windows: IdentityWindows = {
      take: () => new Promise<WindowTake>((resolve) => answers.push(resolve)),
    };
    const asked = (count: number): Promise<number> =>
      eventually(
        () => Promise.resolve(answers.length),
        (length) => length >= count,
      );
    const place = { done: () => undefined, giveBack: () => undefined };
    const limiter = new IdentityLimiter({ maxWaitMs: 1_000, fleet: windows });
    const first = limiter.acquire(BOT, 'user:a');
    expect(await asked(1)).toBe(1);
    answers[0]({ admitted: false, retryAfterMs: 5, reason: 'full' });
    // Its wait ends: the limiter asks room for it again, and waits for the answer.
    expect(await asked(2)).toBe(2);
    // Meanwhile another call comes to wait; its wake-up comes while that answer is awaited.
    const second = limiter.acquire(BOT, 'user:b');
    expect(limiter.waiting).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    answers[1]({ admitted: true, place });
    await expect(first).resolves.toBe(place);
    // The second call is asked for in turn, not left until its deadline.
    expect(await asked(3)).toBe(3);
    answers[2]({ admitted: true, place });
    await expect(second).resolves.toBe(place);
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

describe('a crowd behind one address on the token endpoint (10 calls a second)', () => {
  const ENDPOINT: IdentityId = { key: 'client', label: 'the token endpoint', perSecond: 10 };
  const TOKEN = 'client:POST /oauth2/token:';

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /**
   * `count` logins of `callers` (in turn), one every `everyMs`, each an exchange as PlatformHttp
   * makes it: room in its identity's window, then its turn in the endpoint's bucket queue, answered
   * at once. Resolves with when each call left (or its refusal).
   */
  async function logins(
    count: number,
    everyMs: number,
    callers: (i: number) => string,
  ): Promise<{ left: number[]; refused: BucketBusyError[]; leftBy: Map<string, number> }> {
    const now = (): number => performance.now();
    const queues = new BucketQueues({ ...DEFAULT_BUCKET_QUEUE_LIMITS, maxWaitMs: 2_000 }, now);
    const limiter = new IdentityLimiter({ maxWaitMs: 2_000, now });
    const left: number[] = [];
    const refused: BucketBusyError[] = [];
    const leftBy = new Map<string, number>();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const caller = callers(i);
      const exchange = async (): Promise<void> => {
        const place = await limiter.acquire(ENDPOINT, caller);
        try {
          await queues.run(
            { key: TOKEN, label: 'POST /oauth2/token', identity: ENDPOINT, caller },
            () => {
              left.push(now());
              leftBy.set(caller, (leftBy.get(caller) ?? 0) + 1);
              place.done();
              return Promise.resolve();
            },
          );
        } finally {
          place.giveBack();
        }
      };
      calls.push(exchange().catch((error: unknown) => void refused.push(error as BucketBusyError)));
      await jest.advanceTimersByTimeAsync(everyMs);
    }
    while (left.length + refused.length < count) await jest.advanceTimersByTimeAsync(10);
    await Promise.all(calls);
    return { left, refused, leftBy };
  }

  /** The most calls that left within any one second. */
  const busiestSecond = (times: readonly number[]): number =>
    Math.max(
      ...times.map((start) => times.filter((at) => at >= start && at < start + 1_000).length),
    );

  it('serves 30 logins arriving within a second from one address, none refused, 10 a second at most', async () => {
    const { left, refused } = await logins(30, 33, () => 'ip:192.0.2.77');
    expect(refused.map((error) => error.message)).toEqual([]);
    expect(left).toHaveLength(30);
    expect(busiestSecond(left)).toBe(10);
  });

  it('still serves a real login while twelve addresses burst made-up codes', async () => {
    const attackers = (i: number): string => `ip:203.0.113.${1 + (i % 12)}`;
    const { refused, leftBy } = await logins(60, 5, (i) =>
      i === 40 || i === 50 ? `ip:198.51.100.${i}` : attackers(i),
    );
    expect(leftBy.get('ip:198.51.100.40')).toBe(1);
    expect(leftBy.get('ip:198.51.100.50')).toBe(1);
    for (const error of refused) expect(error).toBeInstanceOf(BucketBusyError);
  });
});
