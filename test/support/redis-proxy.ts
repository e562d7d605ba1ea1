import type Redis from 'ioredis';
import { RedisConnection } from 'src/common/redis/redis.module';
import { eventually } from 'test/support/eventually';
import { TcpProxy } from 'test/support/tcp-proxy';

/** Tests that cut Redis need one to cut: they run in CI's second pass (REDIS_URL set). */
export const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;

/** A cuttable proxy in front of the configured Redis, and the `REDIS_URL` that goes through it. */
export async function proxyRedis(): Promise<{ proxy: TcpProxy; url: string }> {
  const redis = new URL(process.env.REDIS_URL ?? '');
  const proxy = await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) });
  return { proxy, url: `redis://127.0.0.1:${proxy.port}` };
}

/** A Redis client as the service opens one (no offline queue, short timeouts), once it is ready. */
export async function readyRedis(url = process.env.REDIS_URL ?? ''): Promise<Redis> {
  const client = (await RedisConnection.open(url, '')).client as Redis;
  await eventually(
    () => Promise.resolve(client.status),
    (status) => status === 'ready',
    5_000,
  );
  return client;
}
