import type { DataSource, EntityManager } from 'typeorm';
import { ErrorCode } from 'src/common/errors/error-code';
import type { RedisConnection } from 'src/common/redis/redis.module';
import type { AppConfig } from 'src/config/app-config';
import {
  GuildSettingsWriters,
  MAX_QUEUED_WRITES,
  MAX_WRITE_WAIT_MS,
  settingsLockKey,
} from 'src/settings/engine/guild-settings-writers';

describe('settingsLockKey', () => {
  it.each([['1100000000000000100'], ['1100000000000000300'], ['1'], ['18446744073709551615']])(
    'gives guild %s a stable signed 64-bit key',
    (guildId) => {
      const key = BigInt(settingsLockKey(guildId));
      expect(key >= -(2n ** 63n) && key < 2n ** 63n).toBe(true);
      expect(settingsLockKey(guildId)).toBe(settingsLockKey(guildId));
    },
  );

  it('gives different guilds different keys', () => {
    const keys = ['1', '2', '1100000000000000100', '1100000000000000101'].map(settingsLockKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('is the first 8 bytes of SHA-256("settings:<id>") read as a signed big-endian integer', () => {
    // sha256("settings:1") begins dcdbf9c940e4356e: the top bit is set, so the key is negative.
    expect(settingsLockKey('1')).toBe(BigInt.asIntN(64, 0xdcdbf9c940e4356en).toString());
  });
});

describe('GuildSettingsWriters', () => {
  /** A data source whose transactions are counted: one open means a connection held. */
  function writers(): { writers: GuildSettingsWriters; open: () => number; most: () => number } {
    let open = 0;
    let most = 0;
    const manager = { query: () => Promise.resolve([]) } as unknown as EntityManager;
    const dataSource = {
      transaction: async <T>(work: (m: EntityManager) => Promise<T>): Promise<T> => {
        open++;
        most = Math.max(most, open);
        try {
          return await work(manager);
        } finally {
          open--;
        }
      },
    } as unknown as DataSource;
    const redis = { client: null } as unknown as RedisConnection;
    const config = { redisKeyPrefix: 'test:' } as AppConfig;
    return {
      writers: new GuildSettingsWriters(dataSource, redis, config),
      open: () => open,
      most: () => most,
    };
  }

  /** A piece of work that ends when `release` is called. */
  function held(): { work: () => Promise<string>; release: () => void; started: () => boolean } {
    let release = (): void => undefined;
    let started = false;
    const done = new Promise<string>((resolve) => (release = () => resolve('done')));
    return {
      work: () => {
        started = true;
        return done;
      },
      release: () => release(),
      started: () => started,
    };
  }

  const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  afterEach(() => jest.useRealTimers());

  it('runs one writer of a guild at a time; the others wait without a transaction, in order', async () => {
    const { writers: w, most } = writers();
    const first = held();
    const second = held();
    const a = w.write('1', first.work);
    const b = w.write('1', second.work);
    const other = w.write('2', () => Promise.resolve('other guild'));
    await settle();
    expect(first.started()).toBe(true);
    expect(second.started()).toBe(false);
    await expect(other).resolves.toBe('other guild');
    first.release();
    await expect(a).resolves.toBe('done');
    await settle();
    expect(second.started()).toBe(true);
    second.release();
    await expect(b).resolves.toBe('done');
    // Guild 1's second writer never held a transaction while the first ran.
    expect(most()).toBe(2);
  });

  it(`refuses a writer once ${MAX_QUEUED_WRITES} of the guild wait, and one that waited ${MAX_WRITE_WAIT_MS} ms, with Retry-After`, async () => {
    jest.useFakeTimers();
    const { writers: w } = writers();
    const first = held();
    const running = w.write('1', first.work);
    const waiting = Array.from({ length: MAX_QUEUED_WRITES }, () =>
      w.write('1', () => Promise.resolve('late')),
    );
    const over = w.write('1', () => Promise.resolve('never'));
    await expect(over).rejects.toMatchObject({
      code: ErrorCode.RateLimited,
      headers: { 'Retry-After': 2 },
    });
    jest.advanceTimersByTime(MAX_WRITE_WAIT_MS);
    for (const write of waiting) {
      await expect(write).rejects.toThrow(`took longer than ${MAX_WRITE_WAIT_MS} ms`);
    }
    first.release();
    await expect(running).resolves.toBe('done');
    // The guild is free again.
    await expect(w.write('1', () => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('refuses a second import or restore of a guild at once, and lets one through after', async () => {
    const { writers: w } = writers();
    const first = held();
    const running = w.write('1', first.work, { bulk: true });
    await expect(w.write('1', () => Promise.resolve('x'), { bulk: true })).rejects.toThrow(
      'An import or restore of this guild is already under way',
    );
    first.release();
    await running;
    await expect(w.write('1', () => Promise.resolve('again'), { bulk: true })).resolves.toBe(
      'again',
    );
  });
});
