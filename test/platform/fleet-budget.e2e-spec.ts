import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { INVALID_REQUEST_BUDGET } from 'src/platform/platform.module';
import {
  SharedInvalidRequestBudget,
  type SharedBudgetOptions,
} from 'src/platform/shared-invalid-request-budget';
import { eventually } from 'test/support/eventually';
import { faultsOf } from 'test/support/emulator-faults';
import { captureLogs, DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { describeWithRedis, proxyRedis, readyRedis } from 'test/support/redis-proxy';
import type { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { describeShared } from 'test/support/two-instances';

/**
 * The platform bans an address, not an instance: with Redis, the fleet behind one address counts
 * its invalid answers (401, 403, 429) in one window (docs/platform.md, "The invalid-request
 * budget").
 */
describeWithRedis('the fleet’s invalid-request budget in Redis', () => {
  const clients: Redis[] = [];
  const budgets: OnApplicationShutdown[] = [];

  afterEach(async () => {
    for (const budget of budgets.splice(0)) await budget.onApplicationShutdown();
    for (const client of clients.splice(0)) client.disconnect();
  });

  /** A Redis client as the service opens one, closed after the test. */
  async function connect(url = process.env.REDIS_URL ?? ''): Promise<Redis> {
    const client = await readyRedis(url);
    clients.push(client);
    return client;
  }

  /** `count` instances sharing one budget (one key prefix), each with its own connection. */
  async function fleet(
    count: number,
    options: Omit<SharedBudgetOptions, 'keyPrefix'>,
    url?: string,
  ): Promise<{ budget: SharedInvalidRequestBudget; client: Redis; keyPrefix: string }[]> {
    const keyPrefix = `test:budget:${randomBytes(6).toString('hex')}:`;
    const instances: { budget: SharedInvalidRequestBudget; client: Redis; keyPrefix: string }[] =
      [];
    for (let i = 0; i < count; i++) {
      const client = await connect(url);
      const budget = new SharedInvalidRequestBudget(client, { keyPrefix, ...options });
      budgets.push(budget);
      instances.push({ budget, client, keyPrefix });
    }
    // Once every instance has said it is alive, each reads the fleet's size with its next refresh.
    await sleep((options.refreshMs ?? 1_000) + 10);
    for (const { budget } of instances) await budget.spent();
    return instances;
  }

  /** Every instance's next exchange with Redis has sent what it recorded. */
  async function settle(instances: SharedInvalidRequestBudget[]): Promise<boolean[]> {
    await Promise.all(instances.map((budget) => budget.spent()));
    return Promise.all(instances.map((budget) => budget.spent()));
  }

  function recordOn(budget: SharedInvalidRequestBudget, answers: number): void {
    for (let i = 0; i < answers; i++) budget.record();
  }

  it('counts the answers of three instances in one window and stops all three at the limit', async () => {
    const [a, b, c] = (await fleet(3, { limit: 6, refreshMs: 0 })).map(({ budget }) => budget);
    recordOn(a, 2);
    recordOn(b, 2);
    recordOn(c, 1);
    expect(await settle([a, b, c])).toEqual([false, false, false]);
    expect([a.count(), b.count(), c.count()]).toEqual([5, 5, 5]);
    // The sixth answer, on any instance, spends the budget for all of them.
    recordOn(c, 1);
    expect(await settle([a, b, c])).toEqual([true, true, true]);
    expect([a.count(), b.count(), c.count()]).toEqual([6, 6, 6]);
    expect([a.threshold(), b.threshold(), c.threshold()]).toEqual([6, 6, 6]);
  });

  it('lets an instance that drew no invalid answer stop within a refresh, without a Redis call per platform call', async () => {
    const [a, b] = await fleet(2, { limit: 3, refreshMs: 1_000 });
    const asked = jest.spyOn(b.client, 'eval');
    // b reads the fleet's count now, before a's answers.
    await sleep(1_010);
    expect(await b.budget.spent()).toBe(false);
    recordOn(a.budget, 3);
    expect(await a.budget.spent()).toBe(true);
    // Within the refresh b asks Redis nothing and still lets calls out; after it, it stops.
    expect([await b.budget.spent(), await b.budget.spent()]).toEqual([false, false]);
    await sleep(1_010);
    expect(await b.budget.spent()).toBe(true);
    expect(await b.budget.spent()).toBe(true);
    // One exchange per refresh, however many calls asked.
    expect(asked).toHaveBeenCalledTimes(2);
  });

  it('lets answers leave the window as it slides', async () => {
    const [a, b] = (await fleet(2, { limit: 2, refreshMs: 0, windowMs: 600, slotMs: 100 })).map(
      ({ budget }) => budget,
    );
    recordOn(a, 1);
    recordOn(b, 1);
    expect(await b.spent()).toBe(true);
    await sleep(900);
    expect(await a.spent()).toBe(false);
    expect(a.count()).toBe(0);
  });

  it("never counts fewer than this instance's own answers, should Redis lose the fleet's window", async () => {
    const [a] = await fleet(2, { limit: 5, refreshMs: 0 });
    recordOn(a.budget, 3);
    expect(await settle([a.budget])).toEqual([false]);
    // A Redis restarted without persistence: the window is gone, the platform still counts.
    const keys = await a.client.keys('test:budget:*:platform:invalid-answers');
    await a.client.del(...keys);
    expect(await a.budget.spent()).toBe(false);
    expect(a.budget.count()).toBe(3);
    recordOn(a.budget, 2);
    expect(await settle([a.budget])).toEqual([true]);
  });

  describe('a slots hash changed by hand, or by a clock that stepped back', () => {
    const slotsKey = ({ keyPrefix }: { keyPrefix: string }): string =>
      `${keyPrefix}platform:invalid-answers`;

    it('drops a slot ahead of Redis’s clock at once, however large its count, and logs it as what it is', async () => {
      const logs = captureLogs();
      const [a, b] = await fleet(2, { limit: 100, refreshMs: 0 });
      recordOn(a.budget, 1);
      expect(await settle([a.budget])).toEqual([false]);
      const key = slotsKey(a);
      await a.client.hset(key, '999999999999', '9000');
      expect(await b.budget.spent()).toBe(false);
      expect(await a.budget.spent()).toBe(false);
      expect(await a.client.hget(key, '999999999999')).toBeNull();
      expect(a.budget.count()).toBe(1);
      expect(a.budget.shared()).toBe(true);
      expect(logs.stop().join('\n')).toMatch(/dropped slots from Redis that no instance writes/);
    });

    it('drops a count that is not a number and keeps counting with the fleet (no “cannot be reached”)', async () => {
      const logs = captureLogs();
      const [a] = await fleet(1, { limit: 100, refreshMs: 0 });
      recordOn(a.budget, 2);
      expect(await settle([a.budget])).toEqual([false]);
      const key = slotsKey(a);
      const [slot] = await a.client.hkeys(key);
      await a.client.hset(key, 'not-a-slot', '5');
      await a.client.hset(key, String(Number(slot) - 1), 'lots');
      expect(await a.budget.spent()).toBe(false);
      expect(a.budget.shared()).toBe(true);
      expect(a.budget.count()).toBe(2);
      expect(await a.client.hlen(key)).toBe(1);
      const logged = logs.stop().join('\n');
      expect(logged).not.toMatch(/cannot be reached/);
      expect(logged).toMatch(/dropped slots from Redis that no instance writes/);
    });

    it('replaces a key of another type (it was overwritten) and heals', async () => {
      const [a] = await fleet(1, { limit: 100, refreshMs: 0 });
      recordOn(a.budget, 1);
      expect(await settle([a.budget])).toEqual([false]);
      const key = slotsKey(a);
      await a.client.set(key, 'overwritten');
      recordOn(a.budget, 1);
      expect(await settle([a.budget])).toEqual([false]);
      expect(a.budget.shared()).toBe(true);
      expect(await a.client.type(key)).toBe('hash');
    });
  });

  describe('while Redis cannot be reached', () => {
    let proxy: TcpProxy;
    let url: string;

    beforeEach(async () => {
      ({ proxy, url } = await proxyRedis());
    });
    afterEach(async () => {
      await proxy.close();
    });

    it("falls back to each instance's share of the limit, never to no limit, and adds what it counted once Redis is back", async () => {
      const [a, b, c] = (await fleet(3, { limit: 9, refreshMs: 50 }, url)).map(
        ({ budget }) => budget,
      );
      recordOn(b, 1);
      await eventually(
        () => c.spent().then(() => c.count()),
        (count) => count === 1,
        2_000,
      );
      proxy.cut();
      // Each instance learns that Redis is gone on its next exchange with it.
      await sleep(60);
      await Promise.all([a.spent(), b.spent(), c.spent()]);
      await eventually(
        () => Promise.resolve([a.shared(), b.shared(), c.shared()]),
        (shared) => shared.every((known) => !known),
        3_000,
      );
      // A share is the limit over the fleet's size as last seen: 9 / 3.
      expect([a.threshold(), b.threshold(), c.threshold()]).toEqual([3, 3, 3]);
      recordOn(a, 3);
      expect(await a.spent()).toBe(true);
      // b counted one answer of its own before the cut; c none.
      expect([a.count(), b.count(), c.count()]).toEqual([3, 1, 0]);
      expect(await b.spent()).toBe(false);
      expect(await c.spent()).toBe(false);

      proxy.restore();
      // Back on the fleet's window: a's three answers were kept and are added to b's one.
      await eventually(
        async () => {
          await Promise.all([a.spent(), b.spent(), c.spent()]);
          return [a.shared(), b.shared(), c.shared(), c.count()] as const;
        },
        ([sa, sb, sc, count]) => sa && sb && sc && count === 4,
        5_000,
      );
      expect(a.threshold()).toBe(9);
    });

    it('keeps a share of one at least when the limit is smaller than the fleet', async () => {
      const budgets = (await fleet(3, { limit: 2, refreshMs: 50 }, url)).map(
        ({ budget }) => budget,
      );
      proxy.cut();
      await sleep(60);
      await eventually(
        () => Promise.all(budgets.map((budget) => budget.spent().then(() => budget.shared()))),
        (shared) => shared.every((known) => !known),
        3_000,
      );
      expect(budgets.map((budget) => budget.threshold())).toEqual([1, 1, 1]);
      expect(await budgets[0].spent()).toBe(false);
      recordOn(budgets[0], 1);
      expect(await budgets[0].spent()).toBe(true);
    });
  });
});

/**
 * The same budget inside running services: an instance that never drew an invalid answer refuses
 * platform calls once the others spent the fleet's budget (CI's PostgreSQL and Redis pass).
 */
describeShared('several instances of the service behind one address', () => {
  const emulator = useEmulator();
  const instances: TestApp[] = [];
  const TOKEN_ROUTE = 'POST /oauth2/token';
  const UNAUTHORIZED = { kind: 'respond', status: 401, body: { error: 'invalid_client' } } as const;

  beforeAll(async () => {
    const env = {
      ...liveModeEnv(emulator()),
      REDIS_KEY_PREFIX: `fleet-budget-${Date.now()}:`,
      PLATFORM_INVALID_REQUEST_LIMIT: '3',
    };
    const first = await createTestApp({ env });
    const shared = { ...first.database, drop: () => Promise.resolve() };
    instances.push(first);
    for (let i = 0; i < 2; i++) instances.push(await createTestApp({ database: shared, env }));
  });
  afterAll(async () => {
    for (const instance of instances.reverse()) await instance.close();
  });

  async function login(t: TestApp): Promise<string> {
    const code = emulator().issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
    const answer = await t.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    expect(answer.status).toBe(200);
    return answer.body.token as string;
  }

  it('stops every instance once the fleet has drawn PLATFORM_INVALID_REQUEST_LIMIT invalid answers', async () => {
    const [a, b, c] = instances;
    const budgets = instances.map((t) =>
      t.app.get<SharedInvalidRequestBudget>(INVALID_REQUEST_BUDGET),
    );
    expect(budgets.every((budget) => budget instanceof SharedInvalidRequestBudget)).toBe(true);
    const tokens = [await login(b), await login(c)];
    // Three invalid answers (401 from the token endpoint) drawn by instance a alone.
    faultsOf(emulator()).inject(TOKEN_ROUTE, UNAUTHORIZED, 3);
    for (let i = 0; i < 3; i++) {
      const code = emulator().issueCode({ userId: DEMO_IDS.bob, redirectUri: DEMO_REDIRECT });
      const answer = await a.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
      expect(answer.status).toBeGreaterThanOrEqual(400);
    }
    expect(await budgets[0].spent()).toBe(true);
    expect(budgets[0].count()).toBe(3);

    // b and c drew none: their next platform call is refused locally and never reaches it.
    await sleep(1_100);
    const before = emulator().requests.length;
    for (const [i, instance] of [b, c].entries()) {
      const answer = await instance
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.community}`)
        .set('Authorization', tokens[i]);
      // The service's own limit, not a failure: 429 naming the budget, with Retry-After.
      expect(answer.status).toBe(429);
      expect(answer.body).toEqual({
        code: ErrorCode.RateLimited,
        message: expect.stringContaining(
          "This service's budget of invalid requests to the chat platform",
        ),
      });
      expect(answer.headers['retry-after']).toBe('10');
    }
    expect(emulator().requests.length).toBe(before);
  });
});
