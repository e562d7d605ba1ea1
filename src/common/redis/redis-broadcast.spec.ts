import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import { RedisBroadcasts } from 'src/common/redis/redis-broadcast';

/** A Redis client whose publishes are recorded and whose subscriber delivers what the test says. */
function fakeRedis(failPublish = false): {
  client: Redis;
  published: [string, string][];
  subscriber: EventEmitter & { disconnected: boolean; channels: string[] };
} {
  const published: [string, string][] = [];
  const subscriber = Object.assign(new EventEmitter(), {
    disconnected: false,
    channels: [] as string[],
    subscribe(channel: string) {
      subscriber.channels.push(channel);
      return Promise.resolve(1);
    },
    disconnect() {
      subscriber.disconnected = true;
    },
  });
  const client = {
    duplicate: () => subscriber,
    publish: (channel: string, message: string) =>
      failPublish
        ? Promise.reject(new Error('down'))
        : (published.push([channel, message]), Promise.resolve(1)),
  } as unknown as Redis;
  return { client, published, subscriber };
}

describe('RedisBroadcasts', () => {
  it('publishes JSON on the prefixed channel and hands every instance the parsed message', async () => {
    const redis = fakeRedis();
    const received: unknown[] = [];
    const channel = new RedisBroadcasts(redis.client, 'bms:').open<{ n: number }>('things', {
      what: 'things',
      otherwise: 'nothing else',
      onMessage: (message) => received.push(message),
    });
    expect(channel.channel).toBe('bms:things');
    expect(channel.isShared).toBe(true);
    await expect(channel.publish({ n: 1 })).resolves.toBe(true);
    expect(redis.published).toEqual([['bms:things', '{"n":1}']]);
    expect(redis.subscriber.channels).toEqual(['bms:things']);
    redis.subscriber.emit('message', 'bms:things', '{"n":2}');
    redis.subscriber.emit('message', 'bms:things', 'not json');
    expect(received).toEqual([{ n: 2 }]);
  });

  it.each([
    ['without Redis', null],
    ['when Redis refuses', fakeRedis(true).client],
  ])('answers false %s, so the owner acts on its own', async (_case, client) => {
    const channel = new RedisBroadcasts(client, 'bms:').open('things', {
      what: 'things',
      otherwise: 'nothing else',
      onMessage: () => undefined,
    });
    await expect(channel.publish({})).resolves.toBe(false);
  });

  it('closes every subscriber at shutdown', () => {
    const redis = fakeRedis();
    const broadcasts = new RedisBroadcasts(redis.client, 'bms:');
    broadcasts.open('a', { what: 'a', otherwise: '', onMessage: () => undefined });
    broadcasts.onApplicationShutdown();
    expect(redis.subscriber.disconnected).toBe(true);
  });
});
