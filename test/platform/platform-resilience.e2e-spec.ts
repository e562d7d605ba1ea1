import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import {
  InvalidRequestBudgetSpentError,
  PlatformUnavailableError,
} from 'src/platform/platform.errors';
import { InvalidRequestBudget } from 'src/platform/invalid-request-budget';
import { captureLogs, clientFor, useEmulator } from 'test/support/platform';
import { unusedPort } from 'test/support/ports';
import { faultsOf } from 'test/support/emulator-faults';

const GUILD_ROUTE = 'GET /guilds/:guild_id';
const CHANNELS_ROUTE = 'GET /guilds/:guild_id/channels';

/** Times (ms) at which the emulator saw each request to a route. */
function arrivals(emulator: ReturnType<ReturnType<typeof useEmulator>>, route: string): number[] {
  return emulator.requests.filter((r) => r.route === route).map((r) => r.at);
}

describe('platform transport', () => {
  const emulator = useEmulator();
  beforeEach(() => {
    emulator().requests.length = 0;
  });

  describe('429 rate limits', () => {
    it('waits out retry_after, then retries and succeeds', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0.4 });
      const lookup = await clientFor(emulator()).getGuild(DEMO_IDS.community);
      expect(lookup.found).toBe(true);
      const [first, second] = arrivals(emulator(), GUILD_ROUTE);
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(2);
      // The retry came after the delay, not before.
      expect(second - first).toBeGreaterThanOrEqual(400);
    });

    it('backs off when a 429 names no wait, instead of retrying at once', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0 }, 2);
      const lookup = await clientFor(emulator(), { backoffMs: 100 }).getGuild(DEMO_IDS.community);
      expect(lookup.found).toBe(true);
      const [a, b, c] = arrivals(emulator(), GUILD_ROUTE);
      // The retry backoff stands in for the wait: ≥ 50 ms, then ≥ 100 ms.
      expect(b - a).toBeGreaterThanOrEqual(50);
      expect(c - b).toBeGreaterThanOrEqual(100);
    });

    it('holds later requests on the same bucket until it resets', async () => {
      const client = clientFor(emulator());
      // The platform names the route's bucket on every answer: this one teaches it to the client.
      await client.getGuild(DEMO_IDS.community);
      emulator().requests.length = 0;
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0.4 });
      const first = client.getGuild(DEMO_IDS.community);
      await sleep(100);
      // Sent while the first request waits out its 429: it must wait for the bucket too.
      const second = client.getGuild(DEMO_IDS.community);
      await Promise.all([first, second]);
      const [limitedAt, ...later] = arrivals(emulator(), GUILD_ROUTE);
      expect(later).toHaveLength(2);
      for (const at of later) expect(at - limitedAt).toBeGreaterThanOrEqual(400);
    });

    it("keys limits on the platform's bucket ids: routes sharing a bucket share its limit, per guild", async () => {
      const client = clientFor(emulator());
      const shared = { kind: 'bucket', bucket: 'guild-reads' } as const;
      // The platform names the same bucket for two routes…
      faultsOf(emulator()).inject(GUILD_ROUTE, shared);
      await client.getGuild(DEMO_IDS.community);
      faultsOf(emulator()).inject(CHANNELS_ROUTE, shared);
      await client.getGuildChannels(DEMO_IDS.community);
      // …and one of them spends it.
      faultsOf(emulator()).inject(GUILD_ROUTE, { ...shared, resetAfter: 0.4 });
      await client.getGuild(DEMO_IDS.community);
      const [spentAt] = arrivals(emulator(), GUILD_ROUTE).slice(-1);
      const otherGuild = client.getGuildChannels(DEMO_IDS.botLab);
      await client.getGuildChannels(DEMO_IDS.community);
      await otherGuild;
      const [otherGuildAt, sameGuildAt] = arrivals(emulator(), CHANNELS_ROUTE).slice(-2);
      // The other route waited for the shared bucket of this guild; another guild's did not.
      expect(sameGuildAt - spentAt).toBeGreaterThanOrEqual(400);
      expect(otherGuildAt - spentAt).toBeLessThan(400);
      const urls = emulator()
        .requests.filter((r) => r.route === CHANNELS_ROUTE)
        .map((r) => r.url);
      expect(urls.slice(-2)).toEqual([
        `/api/v10/guilds/${DEMO_IDS.botLab}/channels`,
        `/api/v10/guilds/${DEMO_IDS.community}/channels`,
      ]);
    });

    it('honours a global rate limit on every route', async () => {
      const client = clientFor(emulator());
      faultsOf(emulator()).inject(GUILD_ROUTE, {
        kind: 'rate_limit',
        retryAfter: 0.3,
        global: true,
      });
      await client.getGuild(DEMO_IDS.community);
      const [limitedAt] = arrivals(emulator(), GUILD_ROUTE);
      await client.getBotUser();
      const [userAt] = arrivals(emulator(), 'GET /users/@me');
      expect(userAt - limitedAt).toBeGreaterThanOrEqual(300);
    });

    it('gives up after a bounded number of 429s', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0.05 }, 10);
      const failure = clientFor(emulator(), { rateLimitRetries: 2 }).getGuild(DEMO_IDS.community);
      await expect(failure).rejects.toBeInstanceOf(PlatformUnavailableError);
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(3);
    });

    it('fails at once when the platform asks for a longer wait than allowed', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 60 });
      await expect(
        clientFor(emulator(), { maxRateLimitWaitMs: 1_000 }).getGuild(DEMO_IDS.community),
      ).rejects.toMatchObject({ detail: 'GET /guilds/:guild_id: rate limited for 60000 ms' });
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(1);
    });
  });

  describe('5xx answers', () => {
    it('retries with backoff and succeeds when the platform recovers', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'error', status: 502 }, 2);
      const lookup = await clientFor(emulator(), { backoffMs: 100 }).getGuild(DEMO_IDS.community);
      expect(lookup.found).toBe(true);
      const [a, b, c] = arrivals(emulator(), GUILD_ROUTE);
      // Backoff doubles (with at least half of it kept as jitter floor): ≥ 50 ms, then ≥ 100 ms.
      expect(b - a).toBeGreaterThanOrEqual(50);
      expect(c - b).toBeGreaterThanOrEqual(100);
    });

    it('surfaces as InternalError after the bounded retries, without the platform body', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'error', status: 500 }, 10);
      const failure = clientFor(emulator(), { retries: 2 }).getGuild(DEMO_IDS.community);
      await expect(failure).rejects.toBeInstanceOf(PlatformUnavailableError);
      await expect(failure).rejects.toMatchObject({
        code: ErrorCode.InternalError,
        status: 500,
        message: 'The chat platform is unavailable; try again later',
      });
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(3);
    });
  });

  describe('a hung platform', () => {
    it('hits the timeout on every attempt, then gives up', async () => {
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'hang', delayMs: 5_000 }, 10);
      const failure = clientFor(emulator(), { timeoutMs: 200, retries: 1 }).getGuild(
        DEMO_IDS.community,
      );
      await expect(failure).rejects.toMatchObject({
        detail: expect.stringContaining('timed out after 200 ms'),
      });
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(2);
    });
  });

  describe('the invalid-request budget', () => {
    const missingAccess = {
      kind: 'respond',
      status: 403,
      body: { message: 'Missing Access', code: 50001 },
    } as const;

    it('counts 401, 403 and 429 answers and refuses calls locally once the limit is reached', async () => {
      const client = clientFor(emulator(), {
        budget: new InvalidRequestBudget(3),
        rateLimitRetries: 0,
      });
      const logs = captureLogs();
      faultsOf(emulator()).inject(GUILD_ROUTE, missingAccess, 2);
      expect(await client.getGuild(DEMO_IDS.community)).toEqual({ found: false, missing: 'guild' });
      expect(await client.getGuild(DEMO_IDS.community)).toEqual({ found: false, missing: 'guild' });
      // A 429 of a shared resource is not held against the bot: it does not count.
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0, shared: true });
      await expect(client.getGuild(DEMO_IDS.community)).rejects.toBeInstanceOf(
        PlatformUnavailableError,
      );
      expect(await client.getGuild(DEMO_IDS.community)).toMatchObject({ found: true });
      faultsOf(emulator()).inject(GUILD_ROUTE, { kind: 'rate_limit', retryAfter: 0 });
      await expect(client.getGuild(DEMO_IDS.community)).rejects.toBeInstanceOf(
        PlatformUnavailableError,
      );
      expect(arrivals(emulator(), GUILD_ROUTE)).toHaveLength(5);
      // Three counted answers: every further call is refused without reaching the platform, as
      // the service's own limit (429 naming the budget, with Retry-After), not as a failure.
      for (let i = 0; i < 5; i++) {
        await expect(client.getBotUser()).rejects.toMatchObject({
          code: ErrorCode.RateLimited,
          message: expect.stringContaining('budget of invalid requests to the chat platform'),
          headers: { 'Retry-After': 10 },
        });
      }
      expect(emulator().requests).toHaveLength(5);
      // One clear error line, not one per refused call.
      const lines = logs.stop().filter((line) => line.includes('invalid-request budget'));
      expect(lines).toHaveLength(1);
    });

    it('counts the refusals of user tokens too', async () => {
      const client = clientFor(emulator(), { budget: new InvalidRequestBudget(2) });
      for (let i = 0; i < 2; i++) {
        await expect(client.getUser('not-a-token')).rejects.toThrow('refused the user token');
      }
      await expect(client.getBotUser()).rejects.toBeInstanceOf(InvalidRequestBudgetSpentError);
      expect(emulator().requests).toHaveLength(2);
    });
  });

  it('retries network errors, then gives up', async () => {
    const port = await unusedPort();
    const failure = clientFor({ apiUrl: `http://127.0.0.1:${port}/api` }).getBotUser();
    await expect(failure).rejects.toMatchObject({
      detail: expect.stringContaining('network error after 3 attempts'),
    });
  });
});
