import {
  bucketOf,
  DEFAULT_ROUTE_LIMITS,
  EmulatorRateLimits,
  type EmulatorRateLimitOptions,
  type LimitedRequest,
  type RateLimitVerdict,
} from 'src/platform/emulator/emulator-rate-limits';

const START = 1_700_000_000_000;
const GUILD = 'GET /guilds/:guild_id';
const BOT = 'Bot token';

function limits(options: EmulatorRateLimitOptions = {}): {
  limits: EmulatorRateLimits;
  advance: (ms: number) => void;
} {
  let time = START;
  return {
    limits: new EmulatorRateLimits(options, () => time),
    advance: (ms) => (time += ms),
  };
}

function request(overrides: Partial<LimitedRequest> = {}): LimitedRequest {
  return { route: GUILD, identity: BOT, majorParameter: '1', ...overrides };
}

/** Sends `n` requests at the same instant and returns the verdicts. */
function burst(
  target: EmulatorRateLimits,
  n: number,
  overrides: Partial<LimitedRequest> = {},
): RateLimitVerdict[] {
  return Array.from({ length: n }, () => target.admit(request(overrides)));
}

const refusedCount = (verdicts: RateLimitVerdict[]): number =>
  verdicts.filter((verdict) => verdict.refused).length;

describe('EmulatorRateLimits', () => {
  describe('a route bucket', () => {
    it('answers with the bucket headers, counting down to the limit', () => {
      const { limits: l, advance } = limits();
      const first = l.admit(request());
      advance(250);
      const second = l.admit(request());
      expect(first).toEqual({
        refused: false,
        headers: {
          'X-RateLimit-Bucket': bucketOf(GUILD),
          'X-RateLimit-Limit': '5',
          'X-RateLimit-Remaining': '4',
          'X-RateLimit-Reset': '1700000001.000',
          'X-RateLimit-Reset-After': '1.000',
        },
      });
      expect(second).toEqual({
        refused: false,
        headers: {
          'X-RateLimit-Bucket': bucketOf(GUILD),
          'X-RateLimit-Limit': '5',
          'X-RateLimit-Remaining': '3',
          'X-RateLimit-Reset': '1700000001.000',
          'X-RateLimit-Reset-After': '0.750',
        },
      });
    });

    it('refuses past its limit with a user-scoped 429 until it resets', () => {
      const { limits: l, advance } = limits();
      burst(l, 5);
      advance(300);
      expect(l.admit(request())).toEqual({
        refused: true,
        headers: {
          'X-RateLimit-Bucket': bucketOf(GUILD),
          'X-RateLimit-Limit': '5',
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': '1700000001.000',
          'X-RateLimit-Reset-After': '0.700',
          'Retry-After': '1',
          'X-RateLimit-Scope': 'user',
        },
        body: { message: 'You are being rate limited.', retry_after: 0.7, global: false, code: 0 },
      });
      advance(700);
      const renewed = l.admit(request());
      expect(renewed.refused).toBe(false);
      expect(renewed.headers).toMatchObject({
        'X-RateLimit-Remaining': '4',
        'X-RateLimit-Reset': '1700000002.000',
        'X-RateLimit-Reset-After': '1.000',
      });
    });

    it('rounds Retry-After up to whole seconds and keeps retry_after exact', () => {
      const { limits: l, advance } = limits({
        routes: { [GUILD]: { limit: 1, windowMs: 2_500 } },
      });
      l.admit(request());
      advance(1);
      const refused = l.admit(request());
      expect(refused.headers['Retry-After']).toBe('3');
      expect(refused.headers['X-RateLimit-Reset-After']).toBe('2.499');
      expect(refused.refused && refused.body.retry_after).toBe(2.499);
    });

    it.each([
      ['another guild', { majorParameter: '2' }, false],
      ['another identity', { identity: 'Bearer someone' }, false],
      ['another route', { route: 'GET /guilds/:guild_id/channels' }, false],
      ['the same guild, route and identity', {}, true],
    ])('is kept apart for %s (refused: %s)', (_name, overrides, refused) => {
      const { limits: l } = limits();
      burst(l, 5);
      expect(l.admit(request(overrides)).refused).toBe(refused);
    });

    it('answers a shared route with a shared-scoped 429', () => {
      const { limits: l } = limits({ sharedRoutes: [GUILD] });
      burst(l, 5);
      const refused = l.admit(request());
      expect(refused.refused).toBe(true);
      expect(refused.headers['X-RateLimit-Scope']).toBe('shared');
    });

    it.each([
      ['the defaults', {}, DEFAULT_ROUTE_LIMITS[GUILD].limit],
      ['a configured limit', { routes: { [GUILD]: { limit: 2, windowMs: 1_000 } } }, 2],
    ])('lets through %s (%i per window)', (_name, options: EmulatorRateLimitOptions, allowed) => {
      const { limits: l } = limits(options);
      const verdicts = burst(l, allowed + 1);
      expect(verdicts.slice(0, allowed).every((verdict) => !verdict.refused)).toBe(true);
      expect(verdicts[allowed].refused).toBe(true);
    });

    it('leaves a route without a bucket (null) to the global limit, naming its bucket only', () => {
      const { limits: l } = limits({ routes: { [GUILD]: null } });
      const verdicts = burst(l, 50);
      expect(refusedCount(verdicts)).toBe(0);
      expect(verdicts[49]).toEqual({
        refused: false,
        headers: { 'X-RateLimit-Bucket': bucketOf(GUILD) },
      });
    });
  });

  describe('the global limit', () => {
    it('refuses the 51st request of an identity within a second, with a global 429', () => {
      const { limits: l, advance } = limits();
      // Fifty guilds, one request each: no bucket is spent.
      for (let guild = 0; guild < 50; guild++) {
        expect(l.admit(request({ majorParameter: String(guild) })).refused).toBe(false);
      }
      advance(400);
      expect(l.admit(request({ majorParameter: 'another' }))).toEqual({
        refused: true,
        headers: {
          'Retry-After': '1',
          'X-RateLimit-Global': 'true',
          'X-RateLimit-Scope': 'global',
        },
        body: { message: 'You are being rate limited.', retry_after: 0.6, global: true, code: 0 },
      });
      // Another identity (a user's token, or an address) has a window of its own.
      expect(l.admit(request({ identity: 'address 10.0.0.1' })).refused).toBe(false);
      advance(600);
      expect(l.admit(request({ majorParameter: 'another' })).refused).toBe(false);
    });

    it.each([
      [10, 10, 0],
      [25, 40, 15],
    ])('with %i per second, of a burst of %i refuses %i', (perSecond, size, refused) => {
      const { limits: l } = limits({ globalPerSecond: perSecond, routes: { [GUILD]: null } });
      expect(refusedCount(burst(l, size))).toBe(refused);
      expect(refusedCount(burst(l, 1))).toBe(1);
    });

    it('holds in every second, not only in windows opened by a first request', () => {
      const { limits: l, advance } = limits({ routes: { [GUILD]: null } });
      // One request opens the second; 49 come at its end, and ten just after it: a second from
      // 950 ms holds 59 requests, so only the first of the ten passes.
      expect(refusedCount(burst(l, 1))).toBe(0);
      advance(950);
      expect(refusedCount(burst(l, 49))).toBe(0);
      advance(100);
      const late = burst(l, 10);
      expect(refusedCount(late)).toBe(9);
      const refused = late[1];
      expect(refused.refused && refused.body).toEqual({
        message: 'You are being rate limited.',
        retry_after: 0.9,
        global: true,
        code: 0,
      });
    });

    it('counts requests its buckets refuse against the global window', () => {
      const { limits: l } = limits({ globalPerSecond: 8 });
      // 5 pass, 3 are refused by the bucket: the window of 8 is full.
      burst(l, 8);
      const verdict = l.admit(request({ majorParameter: '2' }));
      expect(verdict.refused && verdict.body.global).toBe(true);
    });
  });

  describe('memory', () => {
    it('drops windows and buckets once they have reset', () => {
      const { limits: l, advance } = limits();
      for (let n = 0; n < 1_000; n++) l.admit(request({ identity: `Bearer ${n}` }));
      expect(l.size).toBe(2_000);
      advance(1_000);
      l.admit(request());
      expect(l.size).toBe(2);
    });

    it('keeps at most maxEntries of each kind, the oldest going first', () => {
      const { limits: l } = limits({ maxEntries: 10 });
      for (let n = 0; n < 100; n++) l.admit(request({ identity: `Bearer ${n}` }));
      expect(l.size).toBe(20);
      // The newest identity's bucket is still there: its sixth request is refused…
      expect(burst(l, 5, { identity: 'Bearer 99' }).at(-1)?.refused).toBe(true);
      // …the oldest's was forgotten: five more pass.
      expect(refusedCount(burst(l, 5, { identity: 'Bearer 0' }))).toBe(0);
    });
  });
});
