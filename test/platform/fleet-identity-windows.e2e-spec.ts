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
      Array.from({ length: 300 }, (_, i) => instances[i % 3].take(BOT, `user:${i}`, 50)),
    );
    expect(admitted(takes)).toBe(50);
    for (const take of takes.filter((t) => !t.admitted)) {
      expect(take).toMatchObject({ admitted: false, reason: 'full' });
    }
  });

  it('lets a caller alone fill the window, and holds it to its share once another caller wants it', async () => {
    const [a, b] = await fleet(2);
    // Nobody else wants the identity: the crowd behind one address takes every place.
    const crowd = [];
    for (let i = 0; i < 10; i++) crowd.push(await a.take(BOT, 'ip:nat', 10));
    expect(admitted(crowd)).toBe(10);
    // Another caller, on another instance, is refused room: it wants the identity now.
    expect(await b.take(BOT, 'user:quiet', 10)).toMatchObject({ admitted: false, reason: 'full' });
    expect(await a.take(BOT, 'ip:nat', 10)).toMatchObject({ admitted: false, reason: 'full' });
  });

  it('gives each caller its share while others want the identity', async () => {
    const [a, b] = await fleet(2);
    // Two callers refused room on an empty-looking window cannot happen; mark one as wanting by a
    // refusal on a window of one place first.
    const first = await b.take(BOT, 'user:other', 1);
    expect(first.admitted).toBe(true);
    expect(await b.take(BOT, 'user:quiet', 1)).toMatchObject({ admitted: false, reason: 'full' });
    // With 10 places and three callers concerned (the flood, the one in the window, the one
    // wanting it), the flood's share is 4.
    const flood = [];
    for (let i = 0; i < 6; i++) flood.push(await a.take(BOT, 'user:flood', 10));
    expect(admitted(flood)).toBe(4);
    expect(flood.filter((t) => !t.admitted)[0]).toMatchObject({ reason: 'share' });
    // The caller who wants it still finds room.
    expect(await b.take(BOT, 'user:quiet', 10)).toMatchObject({ admitted: true });
  });

  it('holds a place while its call is under way, and frees it a window after the answer', async () => {
    const [a] = await fleet(1);
    const first = await a.take(BOT, 'user:a', 1);
    if (!first.admitted) throw new Error('an empty window has room');
    expect(await a.take(BOT, 'user:b', 1)).toMatchObject({ admitted: false, reason: 'full' });
    first.place.done();
    const after = await eventually(
      () => a.take(BOT, 'user:b', 1),
      (take) => take.admitted,
      5_000,
    );
    expect(after.admitted).toBe(true);
  });

  it('frees a place given back unused at once, for every instance', async () => {
    const [a, b] = await fleet(2);
    const first = await a.take(BOT, 'user:a', 1);
    if (!first.admitted) throw new Error('an empty window has room');
    expect(await b.take(BOT, 'user:b', 1)).toMatchObject({ admitted: false, reason: 'full' });
    // Refused before the wire: the platform never counted it, so neither does the window.
    first.place.giveBack();
    const after = await eventually(
      () => b.take(BOT, 'user:b', 1),
      (take) => take.admitted,
      5_000,
    );
    expect(after.admitted).toBe(true);
    if (!after.admitted) return;
    // Answered, a place stays a window however it is given back.
    after.place.done();
    after.place.giveBack();
    expect(await a.take(BOT, 'user:a', 1)).toMatchObject({ admitted: false, reason: 'full' });
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
