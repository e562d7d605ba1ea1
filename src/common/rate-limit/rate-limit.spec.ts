import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { FailOpenStorage } from 'src/common/rate-limit/fail-open-storage';
import { mostPressing, type BucketState } from 'src/common/rate-limit/rate-limiter';

const state = (overrides: Partial<BucketState>): BucketState => ({
  bucket: 'authenticated',
  limit: 10,
  remaining: 5,
  resetSeconds: 30,
  blocked: false,
  ...overrides,
});

describe('the bucket a response reports', () => {
  it('is a refusing bucket first', () => {
    const refusing = state({ bucket: 'guild-info', remaining: 0, blocked: true });
    expect(mostPressing([state({ remaining: 0 }), refusing])).toBe(refusing);
  });

  it('is otherwise the one with the least left', () => {
    const tight = state({ bucket: 'guild-info', remaining: 1 });
    expect(mostPressing([state({ remaining: 200 }), tight])).toBe(tight);
  });

  it('is nothing when nothing was counted', () => {
    expect(mostPressing([])).toBeUndefined();
  });
});

describe('fail-open counters', () => {
  it('pass the storage answer through', async () => {
    const record = { totalHits: 3, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 };
    const storage = new FailOpenStorage({ increment: () => Promise.resolve(record) });
    await expect(storage.increment('k', 60_000, 5, 60_000, 'anonymous')).resolves.toBe(record);
  });

  it('let a request through uncounted when the storage fails, and log the outage once', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const broken: ThrottlerStorage = {
      increment: () => Promise.reject(new Error('Connection is closed.')),
    };
    const storage = new FailOpenStorage(broken);
    for (let i = 0; i < 3; i++) {
      await expect(storage.increment('k', 60_000, 5, 60_000, 'anonymous')).resolves.toEqual({
        totalHits: 0,
        timeToExpire: 60,
        isBlocked: false,
        timeToBlockExpire: 0,
      });
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      { reason: 'Connection is closed.' },
      'Rate-limit counters unavailable; requests are served without limits',
    );
    warn.mockRestore();
  });
});
