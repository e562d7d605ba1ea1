import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { acquireRedisLock } from 'src/common/redis/redis-lock';
import { describeWithRedis } from 'test/support/redis-proxy';

const OPTIONS = { ttlMs: 10_000, waitMs: 0, pollMs: 10 };

describeWithRedis('acquireRedisLock', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(process.env.REDIS_URL as string);
  });
  afterAll(async () => {
    await client.quit();
  });

  it('holds the key until released', async () => {
    const key = `test:lock:${randomUUID()}`;
    const release = await acquireRedisLock(client, key, OPTIONS);
    expect(await client.pttl(key)).toBeGreaterThan(0);
    await release();
    expect(await client.exists(key)).toBe(0);
  });

  it('waits for a held lock and takes it once it is free', async () => {
    const key = `test:lock:${randomUUID()}`;
    const first = await acquireRedisLock(client, key, OPTIONS);
    const holder = await client.get(key);
    const second = acquireRedisLock(client, key, { ...OPTIONS, waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await first();
    await (
      await second
    )();
    expect(holder).not.toBeNull();
    expect(await client.exists(key)).toBe(0);
  });

  // The release must be one atomic step: were it a read then a delete, another holder could take
  // the lock in between (this one's having expired) and lose it to this release.
  it('never deletes a lock that another holder took during the release', async () => {
    const key = `test:lock:${randomUUID()}`;
    let takenOver = false;
    const racing = new Proxy(client, {
      get(target, property) {
        if (property === 'get') {
          return async (name: string) => {
            const value = await target.get(name);
            if (name === key) {
              await target.set(key, 'next-holder', 'PX', 10_000);
              takenOver = true;
            }
            return value;
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const release = await acquireRedisLock(racing, key, OPTIONS);
    await release();
    expect(await client.get(key)).toBe(takenOver ? 'next-holder' : null);
    await client.del(key);
  });
});
