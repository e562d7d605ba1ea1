import { ErrorCode } from 'src/common/errors/error-code';
import {
  BucketBusyError,
  BucketQueues,
  callsAhead,
  callsWaiting,
  DEFAULT_BUCKET_QUEUE_LIMITS,
  type BucketFleet,
  type BucketQueueLimits,
  type IdentityId,
} from 'src/platform/bucket-queue';

/** A call held open until the test ends it. */
interface Held {
  done: Promise<string>;
  finish: () => void;
  started: boolean;
}

/** The bot token, limited to 50 calls a second. */
const BOT: IdentityId = { key: 'bot', label: 'the bot token', perSecond: 50 };

describe('BucketQueues', () => {
  let time = 0;
  const advance = (ms: number): number => (time += ms);

  function queues(limits: Partial<BucketQueueLimits> = {}, fleet?: BucketFleet): BucketQueues {
    time = 1_000;
    return new BucketQueues(
      { ...DEFAULT_BUCKET_QUEUE_LIMITS, maxWaitMs: 2_000, ...limits },
      () => time,
      fleet,
    );
  }

  /** Queues one call of `caller` in `bucket`; it runs until `finish()`. */
  function call(q: BucketQueues, caller: string, bucket = 'bot:GET /users/@me/guilds:'): Held {
    let finish = (): void => undefined;
    const held: Held = { started: false, finish: () => finish(), done: Promise.resolve('') };
    held.done = q.run(
      { key: bucket, label: 'GET /users/@me/guilds', identity: BOT, caller },
      () => {
        held.started = true;
        return new Promise<string>((resolve) => (finish = () => resolve(caller)));
      },
    );
    return held;
  }

  /** Ends a running call after `ms` of the fake clock, and lets the next one start. */
  async function complete(held: Held, ms = 1_000): Promise<void> {
    await flush();
    advance(ms);
    held.finish();
    await held.done;
    await flush();
  }

  const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('runs one call of a bucket at a time and calls of different buckets side by side', async () => {
    const q = queues();
    const first = call(q, 'user:a');
    const second = call(q, 'user:b');
    const elsewhere = call(q, 'user:c', 'bot:GET /guilds/:guild_id:1');
    await flush();
    expect([first.started, second.started, elsewhere.started]).toEqual([true, false, true]);
    await complete(first);
    expect(second.started).toBe(true);
    await complete(second);
    await complete(elsewhere);
    expect(q.stats()).toEqual({ buckets: expect.any(Number), waiting: 0, refused: 0 });
  });

  it('gives the next turn to the caller who used the bucket least, then to the oldest', async () => {
    const q = queues({ maxWaitMs: 60_000 });
    // The heavy caller has been served three times; the light one never.
    for (let i = 0; i < 3; i++) await complete(call(q, 'user:heavy'), 100);
    const running = call(q, 'user:heavy');
    const heavyAgain = call(q, 'user:heavy');
    const lightFirst = call(q, 'user:light');
    const otherLight = call(q, 'ip:198.51.100.7');
    await complete(running, 100);
    expect([lightFirst.started, otherLight.started, heavyAgain.started]).toEqual([
      true,
      false,
      false,
    ]);
    await complete(lightFirst, 100);
    expect([otherLight.started, heavyAgain.started]).toEqual([true, false]);
    await complete(otherLight, 100);
    expect(heavyAgain.started).toBe(true);
    await complete(heavyAgain, 100);
  });

  it.each([
    {
      name: 'a caller holding its share of the bucket while another caller wants it',
      limits: { perCaller: 2, maxWaitMs: 60_000 },
      // user:a's first call runs; user:b waits, and so does user:a's second.
      before: ['user:a', 'user:b', 'user:a'],
      caller: 'user:a',
      message: /you already have 2 calls waiting for it/,
    },
    {
      name: 'a wait longer than maxWaitMs, estimated from how long calls took',
      limits: { maxWaitMs: 2_500 },
      before: ['user:a', 'user:b', 'user:c'],
      caller: 'user:d',
      message: /2 calls are waiting for it/,
    },
    {
      name: 'a full queue of callers who used the bucket no more',
      limits: { maxWaiting: 2, maxWaitMs: 60_000 },
      before: ['user:a', 'user:b', 'user:c'],
      caller: 'user:d',
      message: /2 calls are waiting for it/,
    },
  ])('refuses at once, 429 with Retry-After and the bucket named: $name', async (row) => {
    const q = queues(row.limits);
    // One call has taken 1 s: the estimate of the next ones.
    await complete(call(q, 'service'), 1_000);
    const before = row.before.map((caller) => call(q, caller));
    await flush();
    const refused = call(q, row.caller);
    const error = (await refused.done.catch((e: unknown) => e)) as BucketBusyError;
    expect(error).toBeInstanceOf(BucketBusyError);
    expect(error.code).toBe(ErrorCode.RateLimited);
    expect(error.status).toBe(429);
    expect(error.message).toMatch(/rate limit for GET \/users\/@me\/guilds is shared/);
    expect(error.message).toMatch(row.message);
    expect(error.headers?.['Retry-After']).toBeGreaterThanOrEqual(1);
    expect(refused.started).toBe(false);
    expect(q.stats().refused).toBe(1);
    for (const held of before) await complete(held);
  });

  it("gives a full queue's last place of its heaviest caller to a caller who used the bucket less", async () => {
    const q = queues({ maxWaiting: 2, maxWaitMs: 60_000 });
    for (let i = 0; i < 5; i++) await complete(call(q, 'user:heavy'), 100);
    const running = call(q, 'user:other');
    const heavy1 = call(q, 'user:heavy');
    const heavy2 = call(q, 'user:heavy');
    await flush();
    const light = call(q, 'user:light');
    const lost = (await heavy2.done.catch((e: unknown) => e)) as BucketBusyError;
    expect(lost).toBeInstanceOf(BucketBusyError);
    expect(lost.message).toMatch(/callers who used it less came first/);
    await complete(running, 100);
    expect([light.started, heavy1.started]).toEqual([true, false]);
    await complete(light, 100);
    await complete(heavy1, 100);
  });

  it('refuses a call whose turn does not come within maxWaitMs', async () => {
    const q = queues({ maxWaitMs: 100 });
    const running = call(q, 'user:a');
    const waiting = call(q, 'user:b');
    const error = (await waiting.done.catch((e: unknown) => e)) as BucketBusyError;
    expect(error.message).toMatch(/no turn came within 100 ms/);
    expect(q.stats().waiting).toBe(0);
    await complete(running);
  });

  it('lets a caller alone hold more than its share: a crowd behind one address is not refused while nobody else waits', async () => {
    const q = queues({ perCaller: 2, maxWaitMs: 60_000 });
    await complete(call(q, 'service'), 10);
    const crowd = Array.from({ length: 5 }, () => call(q, 'ip:203.0.113.9'));
    await flush();
    expect(q.stats()).toMatchObject({ waiting: 4, refused: 0 });
    // Once another caller wants the bucket, the crowd's share holds again.
    const other = call(q, 'user:b');
    const more = call(q, 'ip:203.0.113.9');
    await expect(more.done).rejects.toThrow(/you already have 5 calls waiting for it/);
    // The other caller, who asked least, goes next; then the crowd.
    await complete(crowd[0], 10);
    await complete(other, 10);
    for (const held of crowd.slice(1)) await complete(held, 10);
  });

  it("queues a crowd alone in a bucket up to the instance's bound on waiting calls, then refuses at once", async () => {
    const q = queues({ maxWaitingInAll: 3, maxWaitMs: 60_000 });
    // Calls that took 1 s each: the estimate alone would refuse the third waiter.
    await complete(call(q, 'ip:192.0.2.77'), 1_000);
    const crowd = Array.from({ length: 4 }, () => call(q, 'ip:192.0.2.77'));
    await flush();
    expect(q.stats()).toMatchObject({ waiting: 3, refused: 0 });
    const otherBucket = call(q, 'ip:192.0.2.77', 'bot:GET /guilds/:guild_id:1');
    await flush();
    const elsewhere = call(q, 'user:b', 'bot:GET /guilds/:guild_id:2');
    await flush();
    // A call that finds its bucket free does not wait: the bound does not apply to it.
    expect(elsewhere.started).toBe(true);
    await complete(elsewhere, 10);
    const more = call(q, 'ip:192.0.2.77');
    const error = (await more.done.catch((e: unknown) => e)) as BucketBusyError;
    expect(error.message).toMatch(/3 calls are waiting for the platform/);
    expect(error.headers?.['Retry-After']).toBeGreaterThanOrEqual(1);
    await complete(otherBucket, 10);
    for (const held of crowd) await complete(held, 10);
  });

  it('counts calls still taking their place in the fleet as ahead: arrivals meanwhile do not all find the bucket idle', async () => {
    let admitFleet = (): void => undefined;
    const fleetAnswered = new Promise<void>((resolve) => (admitFleet = resolve));
    const fleet: BucketFleet = {
      enter: async () => {
        await fleetAnswered;
        return { leave: () => undefined };
      },
    };
    const q = queues({ maxWaiting: 2, maxWaitMs: 60_000 }, fleet);
    const calls = Array.from({ length: 6 }, (_, i) => call(q, `ip:198.51.100.${i}`));
    const early = await Promise.all(
      calls.map((held) =>
        Promise.race([held.done.then(() => 'done'), flush().then(() => 'pending')]).catch(
          () => 'refused',
        ),
      ),
    );
    // One goes next and two may wait behind it: the other three are refused before any answer
    // from the fleet came.
    expect(early.filter((state) => state === 'refused')).toHaveLength(3);
    admitFleet();
    await flush();
    for (const held of calls.slice(0, 3)) await complete(held, 10);
  });

  it('lets the next call run when a call fails, and does not count the refused ones as held', async () => {
    const q = queues({ perCaller: 1 });
    await expect(
      q.run({ key: 'k', label: 'GET /x', identity: BOT, caller: 'user:a' }, () =>
        Promise.reject(new Error('platform down')),
      ),
    ).rejects.toThrow('platform down');
    await expect(
      q.run({ key: 'k', label: 'GET /x', identity: BOT, caller: 'user:a' }, () =>
        Promise.resolve('ok'),
      ),
    ).resolves.toBe('ok');
  });

  it("counts a caller's calls across the fleet: a place refused elsewhere is refused here", async () => {
    const left: string[] = [];
    const fleet: BucketFleet = {
      enter: (_bucket, caller) =>
        Promise.resolve(
          caller === 'user:busy-elsewhere' ? null : { leave: () => void left.push(caller) },
        ),
    };
    const q = queues({}, fleet);
    await expect(
      q.run(
        { key: 'k', label: 'POST /oauth2/token', identity: BOT, caller: 'user:busy-elsewhere' },
        () => Promise.resolve('sent'),
      ),
    ).rejects.toThrow(/POST \/oauth2\/token .*you already have 10 calls waiting for it/);
    await expect(
      q.run({ key: 'k', label: 'POST /oauth2/token', identity: BOT, caller: 'user:a' }, () =>
        Promise.resolve('sent'),
      ),
    ).resolves.toBe('sent');
    expect(left).toEqual(['user:a']);
  });

  it('keeps no bucket once its calls are done and its usage has aged out', async () => {
    const q = queues();
    const buckets = Array.from({ length: 50 }, (_, i) => `bot:GET /guilds/:guild_id:${i}`);
    for (const bucket of buckets) await complete(call(q, 'user:a', bucket), 10);
    expect(q.stats().buckets).toBe(50);
    advance(3 * 60_000);
    await complete(call(q, 'user:a', 'bot:GET /guilds/:guild_id:new'), 10);
    expect(q.stats()).toEqual({ buckets: 1, waiting: 0, refused: 0 });
  });

  it('ranks a caller by what it asked of the bucket, so a flood that was never served still goes last', async () => {
    const q = queues({ maxWaitMs: 60_000 });
    const running = call(q, 'user:other');
    // A flood: nothing of it has been served yet.
    const flood = [1, 2, 3, 4].map(() => call(q, 'user:flood'));
    await flush();
    const newcomer = call(q, 'user:newcomer');
    await complete(running, 100);
    expect(newcomer.started).toBe(true);
    expect(flood.some((held) => held.started)).toBe(false);
    await complete(newcomer, 100);
    for (const held of flood) await complete(held, 100);
  });

  it('waits out a bucket the platform said is spent itself, and gives the turn at the reset to the caller who asked least', async () => {
    const q = queues({ maxWaitMs: 60_000 });
    const key = 'bot:GET /users/@me/guilds:';
    // The platform answers the first call: nothing left until the reset, 60 ms away.
    await q.run(
      {
        key,
        label: 'GET /users/@me/guilds',
        identity: BOT,
        caller: 'user:flood',
        observed: { remaining: 0, resetAfterMs: 60 },
      },
      () => Promise.resolve(),
    );
    const flood = [1, 2].map(() => call(q, 'user:flood', key));
    await flush();
    const newcomer = call(q, 'user:newcomer', key);
    await flush();
    // Nothing leaves before the reset: the transport would only wait for it.
    expect([...flood, newcomer].some((held) => held.started)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(newcomer.started).toBe(true);
    expect(flood.some((held) => held.started)).toBe(false);
    await complete(newcomer, 10);
    for (const held of flood) await complete(held, 10);
  });

  it('lets a bucket it has never timed hold only a few waiters', async () => {
    const q = queues({ maxWaitMs: 2_000 });
    const calls = Array.from({ length: 8 }, (_, i) => call(q, `user:${i}`));
    const settled = await Promise.all(
      calls.map((held) =>
        Promise.race([held.done.then(() => 'done'), flush().then(() => 'pending')]).catch(
          () => 'refused',
        ),
      ),
    );
    // One running and four waiting (2 s at a guessed 400 ms each); the others refused at once.
    expect(settled.filter((state) => state === 'refused')).toHaveLength(3);
    for (const held of calls.slice(0, 5)) await complete(held, 10);
  });

  describe("the identity's global limit, across all of its buckets", () => {
    /** A call in a bucket of its own (a guild each), held until the test ends it. */
    const inGuild = (q: BucketQueues, caller: string, guild: number): Held =>
      call(q, caller, `bot:GET /guilds/:guild_id:${guild}`);

    it("refuses a caller holding twice its per-bucket share across the identity's buckets while another caller waits for it", async () => {
      const q = queues({ perCaller: 2, maxWaitMs: 60_000 });
      const other = inGuild(q, 'user:b', 8);
      // user:b waits for its turn in guild 8: it wants the identity.
      const otherWaiting = inGuild(q, 'user:b', 8);
      const mine = [0, 1, 2, 3].map((guild) => inGuild(q, 'user:a', guild));
      const refused = inGuild(q, 'user:a', 4);
      await expect(refused.done).rejects.toThrow(/you already have 4 calls under way or waiting/);
      const another = inGuild(q, 'user:c', 4);
      await flush();
      expect(another.started).toBe(true);
      for (const held of [...mine, other, otherWaiting, another]) await complete(held);
      // Everything given back: the caller may send again.
      const again = inGuild(q, 'user:a', 9);
      await complete(again);
    });

    it('lets a caller hold more of the identity while nobody else waits for it', async () => {
      const q = queues({ perCaller: 2, maxWaitMs: 60_000 });
      // Another caller's call is under way, but nobody else waits.
      const other = inGuild(q, 'user:b', 8);
      const mine = [0, 1, 2, 3, 4, 5].map((guild) => inGuild(q, 'user:a', guild));
      await flush();
      expect(mine.every((held) => held.started)).toBe(true);
      expect(q.stats().refused).toBe(0);
      for (const held of [...mine, other]) await complete(held);
    });

    it("counts a caller waiting for room in the identity's rate as wanting it", async () => {
      time = 1_000;
      let othersWaitForRoom = false;
      const q = new BucketQueues(
        { ...DEFAULT_BUCKET_QUEUE_LIMITS, perCaller: 2, maxWaitMs: 60_000 },
        () => time,
        undefined,
        undefined,
        (identity, caller) => identity.key === 'bot' && caller === 'user:a' && othersWaitForRoom,
      );
      const mine = [0, 1, 2, 3].map((guild) => inGuild(q, 'user:a', guild));
      othersWaitForRoom = true;
      const refused = inGuild(q, 'user:a', 4);
      await expect(refused.done).rejects.toThrow(/you already have 4 calls under way or waiting/);
      for (const held of mine) await complete(held);
    });
  });
});

describe("a refusal's reason in words", () => {
  it.each([
    [callsWaiting(1), '1 call is waiting for it'],
    [callsWaiting(3), '3 calls are waiting for it'],
    [callsWaiting(1, 'the platform'), '1 call is waiting for the platform'],
    [callsWaiting(1000, 'the platform'), '1000 calls are waiting for the platform'],
    [callsAhead(1), '1 call is ahead of yours'],
    [callsAhead(2), '2 calls are ahead of yours'],
  ])('%s', (text, expected) => {
    expect(text).toBe(expected);
  });
});
