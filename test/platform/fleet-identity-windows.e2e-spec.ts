import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { BucketBusyError } from 'src/platform/bucket-queue';
import { FleetIdentityWindows } from 'src/platform/fleet-identity-windows';
import { IdentityLimiter } from 'src/platform/identity-limiter';
import type { IdentityId, WindowTake } from 'src/platform/identity-window';
import { eventually } from 'test/support/eventually';
import { describeWithRedis, readyRedis } from 'test/support/redis-proxy';

const BOT: IdentityId = { key: 'bot', label: 'the bot token', perSecond: 50 };

/**
 * The rate of an identity the fleet shares, held in Redis by one atomic script
 * (docs/request-costs.md, "Shared platform identities"): instances asking at once are decided one
 * after another against one window, so none sees room another has just taken.
 */
describeWithRedis('platform identities’ windows in Redis', () => {
  const clients: Redis[] = [];

  afterEach(() => {
    for (const client of clients.splice(0)) client.disconnect();
  });

  async function connect(): Promise<Redis> {
    const client = await readyRedis();
    clients.push(client);
    return client;
  }

  /** `count` instances' windows on one key prefix, each with its own connection. */
  async function fleet(count: number): Promise<FleetIdentityWindows[]> {
    const prefix = `test:identity:${randomBytes(6).toString('hex')}:`;
    return Promise.all(
      Array.from({ length: count }, async () => new FleetIdentityWindows(await connect(), prefix)),
    );
  }

  const admitted = (takes: WindowTake[]): number => takes.filter((take) => take.admitted).length;

  it('lets exactly the limit through when three instances ask 300 calls at once', async () => {
    const instances = await fleet(3);
    const takes = await Promise.all(
      Array.from({ length: 300 }, (_, i) => instances[i % 3].take(BOT, `user:${i}`, 50, true)),
    );
    expect(admitted(takes)).toBe(50);
    for (const take of takes.filter((t) => !t.admitted)) {
      expect(take).toMatchObject({ admitted: false, reason: 'full' });
    }
  });

  it('gives a caller its share past half the window, and room to a caller who asked nothing', async () => {
    const [a, b] = await fleet(2);
    expect(await b.take(BOT, 'user:quiet', 10, true)).toMatchObject({ admitted: true });
    // Past half the window, with one other caller in it, the flood's share is 5 of 10.
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push(await a.take(BOT, 'user:flood', 10, true));
    expect(admitted(flood)).toBe(5);
    expect(flood.filter((t) => !t.admitted)[0]).toMatchObject({ reason: 'share' });
    // A caller who asked nothing still finds room; one who asked much elsewhere does not.
    expect(await b.take(BOT, 'user:heavy', 10, false)).toMatchObject({
      admitted: false,
      reason: 'share',
    });
    expect(await b.take(BOT, 'user:newcomer', 10, true)).toMatchObject({ admitted: true });
  });

  it('holds a place while its call is under way, and frees it a window after the answer', async () => {
    const [a] = await fleet(1);
    const first = await a.take(BOT, 'user:a', 1, true);
    if (!first.admitted) throw new Error('an empty window has room');
    expect(await a.take(BOT, 'user:b', 1, true)).toMatchObject({ admitted: false, reason: 'full' });
    first.place.done();
    const after = await eventually(
      () => a.take(BOT, 'user:b', 1, true),
      (take) => take.admitted,
      5_000,
    );
    expect(after.admitted).toBe(true);
  });

  it('falls back to this instance’s share while Redis cannot be reached, without waiting for it', async () => {
    const down = await connect();
    const windows = new FleetIdentityWindows(
      down,
      `test:identity:${randomBytes(6).toString('hex')}:`,
    );
    down.disconnect();
    const limiter = new IdentityLimiter({ maxWaitMs: 100, fleet: windows, fleetSize: () => 5 });
    // A share of 50 / 5 = 10 a window for this instance.
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => limiter.acquire(BOT, `user:${i}`)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    for (const refused of results.filter((r) => r.status === 'rejected')) {
      expect(refused.reason).toBeInstanceOf(BucketBusyError);
    }
  });
});
