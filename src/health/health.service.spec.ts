import { Clock } from 'src/common/time/clock';
import type { DataSource } from 'typeorm';
import type { RedisConnection } from 'src/common/redis/redis.module';
import { HealthService, READINESS_REUSE_MS } from 'src/health/health.service';

describe('HealthService.readiness', () => {
  let queries: number;
  let databaseUp: boolean;
  let service: HealthService;

  beforeEach(() => {
    jest.useFakeTimers({
      now: 1_000_000,
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    });
    queries = 0;
    databaseUp = true;
    const dataSource = {
      query: () => {
        queries += 1;
        return databaseUp
          ? Promise.resolve([{ '?column?': 1 }])
          : Promise.reject(new Error('down'));
      },
    } as unknown as DataSource;
    service = new HealthService(
      dataSource,
      { client: null } as unknown as RedisConnection,
      new Clock(),
    );
  });

  afterEach(() => jest.useRealTimers());

  it('shares one round of pings between the probes of one second', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => service.readiness()));
    expect(answers).toEqual(Array.from({ length: 50 }, () => ({ database: 'up' })));
    jest.setSystemTime(Date.now() + READINESS_REUSE_MS - 1);
    await expect(service.readiness()).resolves.toEqual({ database: 'up' });
    expect(queries).toBe(1);
  });

  it('pings again once the reused round is a second old, and reports what it finds', async () => {
    await service.readiness();
    databaseUp = false;
    jest.setSystemTime(Date.now() + READINESS_REUSE_MS);
    await expect(service.readiness()).resolves.toEqual({ database: 'down' });
    expect(queries).toBe(2);
  });
});
