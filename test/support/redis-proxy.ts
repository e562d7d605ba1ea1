import { TcpProxy } from 'test/support/tcp-proxy';

/** Tests that cut Redis need one to cut: they run in CI's second pass (REDIS_URL set). */
export const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;

/** A cuttable proxy in front of the configured Redis, and the `REDIS_URL` that goes through it. */
export async function proxyRedis(): Promise<{ proxy: TcpProxy; url: string }> {
  const redis = new URL(process.env.REDIS_URL ?? '');
  const proxy = await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) });
  return { proxy, url: `redis://127.0.0.1:${proxy.port}` };
}
