import { Logger } from '@nestjs/common';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { bucketOf } from 'src/platform/emulator/emulator-rate-limits';
import { type EmulatorOptions, PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { PlatformService } from 'src/platform/platform.service';
import { emulatorOf } from 'test/support/auth';
import { botAndAliceGuild, clientFor } from 'test/support/platform';
import { useTestApp } from 'test/support/test-app';

const BOT = { Authorization: `Bot ${DEMO_SEED.application.bot_token}` };
const GUILD_ROUTE = 'GET /guilds/:guild_id';
const CHANNELS_ROUTE = 'GET /guilds/:guild_id/channels';
const RATE_LIMITED = 'You are being rate limited.';

/** Thirty more guilds with the bot in them, so that a burst spreads over thirty buckets. */
const EXTRA_GUILDS = Array.from({ length: 30 }, (_, n) =>
  (1_300_000_000_000_000_000n + BigInt(n)).toString(),
);
const SEED = { ...DEMO_SEED, guilds: [...DEMO_SEED.guilds, ...EXTRA_GUILDS.map(botAndAliceGuild)] };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function get(
  emulator: PlatformEmulator,
  path: string,
  headers: Record<string, string> = BOT,
): Promise<Answer> {
  const res = await fetch(`${emulator.apiUrl}/v10${path}`, { headers });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** The rate-limit headers of an answer, those it lacks as null. */
function limitHeaders(answer: Answer): Record<string, string | null> {
  const names = [
    'X-RateLimit-Bucket',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-RateLimit-Reset-After',
    'X-RateLimit-Scope',
    'X-RateLimit-Global',
    'Retry-After',
  ];
  return Object.fromEntries(names.map((name) => [name, answer.headers.get(name)]));
}

/** Starts an emulator with rate limits for each test, closed after it. */
function useLimitedEmulator(options: () => EmulatorOptions): () => PlatformEmulator {
  let emulator: PlatformEmulator | undefined;
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(async () => {
    emulator = await PlatformEmulator.start(SEED, {}, options());
  });
  afterEach(async () => {
    await emulator?.close();
  });
  return () => {
    if (!emulator) throw new Error('the emulator is not running');
    return emulator;
  };
}

/** The statuses the emulator answered, in its request log. */
function statuses(emulator: PlatformEmulator): number[] {
  return emulator.requests.map((request) => request.status ?? 0);
}

describe('emulator rate limits', () => {
  describe('to a client that ignores them (raw HTTP, a clock that stands still)', () => {
    const NOW = 1_700_000_000_000;
    const emulator = useLimitedEmulator(() => ({
      rateLimits: { sharedRoutes: [CHANNELS_ROUTE] },
      now: () => NOW,
    }));

    it('answers a route with its bucket, then refuses past the limit with a user-scoped 429', async () => {
      const answers: Answer[] = [];
      for (let n = 0; n < 6; n++)
        answers.push(await get(emulator(), `/guilds/${DEMO_IDS.community}`));
      const bucket = {
        'X-RateLimit-Bucket': bucketOf(GUILD_ROUTE),
        'X-RateLimit-Limit': '5',
        'X-RateLimit-Reset': '1700000001.000',
        'X-RateLimit-Reset-After': '1.000',
      };
      expect(answers.slice(0, 5).map((answer) => [answer.status, limitHeaders(answer)])).toEqual(
        ['4', '3', '2', '1', '0'].map((remaining) => [
          200,
          {
            ...bucket,
            'X-RateLimit-Remaining': remaining,
            'X-RateLimit-Scope': null,
            'X-RateLimit-Global': null,
            'Retry-After': null,
          },
        ]),
      );
      expect(answers[0].body).toMatchObject({ id: DEMO_IDS.community, name: 'Demo Community' });
      const refused = answers[5];
      expect(refused.status).toBe(429);
      expect(limitHeaders(refused)).toEqual({
        ...bucket,
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Scope': 'user',
        'X-RateLimit-Global': null,
        'Retry-After': '1',
      });
      expect(refused.body).toEqual({
        message: RATE_LIMITED,
        retry_after: 1,
        global: false,
        code: 0,
      });
      // Another guild is another bucket.
      expect((await get(emulator(), `/guilds/${DEMO_IDS.botLab}`)).status).toBe(200);
    });

    it('refuses the 51st request of a second with a global 429, and counts what the platform would hold against the address', async () => {
      const answers = await Promise.all(
        [DEMO_IDS.community, ...EXTRA_GUILDS, ...EXTRA_GUILDS.slice(0, 20)].map((guild) =>
          get(emulator(), `/guilds/${guild}`),
        ),
      );
      const refused = answers.filter((answer) => answer.status === 429);
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(50);
      expect(refused).toHaveLength(1);
      expect(limitHeaders(refused[0])).toEqual({
        'X-RateLimit-Bucket': null,
        'X-RateLimit-Limit': null,
        'X-RateLimit-Remaining': null,
        'X-RateLimit-Reset': null,
        'X-RateLimit-Reset-After': null,
        'X-RateLimit-Scope': 'global',
        'X-RateLimit-Global': 'true',
        'Retry-After': '1',
      });
      expect(refused[0].body).toEqual({
        message: RATE_LIMITED,
        retry_after: 1,
        global: true,
        code: 0,
      });
      // Requests without a token are limited per address: this one has a window of its own.
      const anonymous = await get(emulator(), `/guilds/${DEMO_IDS.community}`, {});
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('X-RateLimit-Remaining')).toBe('4');

      // Every request is in the log with its status and address, refused ones included.
      expect(emulator().countRequests(GUILD_ROUTE)).toBe(52);
      expect(emulator().requests).toHaveLength(52);
      expect(emulator().requests.every((request) => request.address === '127.0.0.1')).toBe(true);
      expect(statuses(emulator()).sort()).toEqual([...Array<number>(50).fill(200), 401, 429]);
      // The log names the limit that answered: the 429 is the global one's.
      expect(
        emulator()
          .requests.filter((request) => request.status === 429)
          .map((request) => request.scope),
      ).toEqual(['global']);
      // The 429 and the 401 are what the platform counts towards its ban.
      expect(emulator().invalidAnswers('127.0.0.1')).toBe(2);
      expect(emulator().invalidAnswers()).toBe(2);
      expect(emulator().invalidAnswers('10.9.9.9')).toBe(0);
    });

    it("answers a shared resource's limit with scope shared, which is not counted as invalid", async () => {
      const answers: Answer[] = [];
      for (let n = 0; n < 6; n++) {
        answers.push(await get(emulator(), `/guilds/${DEMO_IDS.community}/channels`));
      }
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(limitHeaders(answers[5])).toMatchObject({
        'X-RateLimit-Scope': 'shared',
        'Retry-After': '1',
        'X-RateLimit-Remaining': '0',
      });
      expect(answers[5].body).toEqual({
        message: RATE_LIMITED,
        retry_after: 1,
        global: false,
        code: 0,
      });
      expect(statuses(emulator())).toEqual([200, 200, 200, 200, 200, 429]);
      expect(emulator().requests.at(-1)?.scope).toBe('shared');
      expect(emulator().invalidAnswers()).toBe(0);
    });

    it('logs and counts a request an interceptor answers, with its status', async () => {
      emulator().intercept(async (_route, reply) => {
        await reply.code(403).send({ message: 'Missing Access', code: 50001 });
      });
      const answer = await get(emulator(), `/guilds/${DEMO_IDS.community}`);
      expect(answer.status).toBe(403);
      // The interceptor ran after the limits: the answer names the bucket it spent.
      expect(answer.headers.get('X-RateLimit-Remaining')).toBe('4');
      expect(emulator().requests.at(-1)).toMatchObject({ route: GUILD_ROUTE, status: 403 });
      expect(emulator().invalidAnswers('127.0.0.1')).toBe(1);
    });
  });

  describe("to the service's transport", () => {
    const emulator = useLimitedEmulator(() => ({ rateLimits: {} }));

    it('60 bot calls at once from two instances sharing the bot token: every call answers, the 429s are waited out', async () => {
      // Each instance's transport keeps to 50 requests a second of its own; together they send 60.
      const instances = [clientFor(emulator()), clientFor(emulator())];
      const started = Date.now();
      const lookups = await Promise.all(
        instances.flatMap((client) => EXTRA_GUILDS.map((guild) => client.getGuild(guild))),
      );
      const elapsed = Date.now() - started;
      expect(lookups).toHaveLength(60);
      for (const [n, lookup] of lookups.entries()) {
        expect(lookup).toMatchObject({ found: true, value: { id: EXTRA_GUILDS[n % 30] } });
      }
      const refused = emulator().requests.filter((request) => request.status === 429);
      // Sixty in one second against a global limit of fifty: ten refused (fewer only when the
      // burst straddles a second), each sent again once its Retry-After had passed.
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.length).toBeLessThanOrEqual(10);
      expect(emulator().requests).toHaveLength(60 + refused.length);
      expect(statuses(emulator()).filter((status) => status === 200)).toHaveLength(60);
      expect(elapsed).toBeGreaterThanOrEqual(1_000);
      expect(emulator().invalidAnswers()).toBe(refused.length);
      expect(emulator().invalidAnswers('127.0.0.1')).toBe(refused.length);
    });

    it('learns a bucket from the headers and waits for it to reset instead of drawing 429s', async () => {
      const client = clientFor(emulator());
      const started = Date.now();
      const lookups = await Promise.all(
        Array.from({ length: 12 }, () => client.getGuild(DEMO_IDS.community)),
      );
      const elapsed = Date.now() - started;
      expect(lookups.every((lookup) => lookup.found)).toBe(true);
      // Five a second: the eleventh and twelfth went in the third second.
      expect(elapsed).toBeGreaterThanOrEqual(2_000);
      const arrivals = emulator().requests.map((request) => request.at - started);
      expect(arrivals).toHaveLength(12);
      expect(arrivals[10]).toBeGreaterThanOrEqual(2_000);
      expect(statuses(emulator())).toEqual(Array<number>(12).fill(200));
      expect(emulator().invalidAnswers()).toBe(0);
    });
  });

  describe('without rateLimits (the default)', () => {
    const emulator = useLimitedEmulator(() => ({}));

    it('names the bucket only and never refuses for rate', async () => {
      const answers = await Promise.all(
        Array.from({ length: 60 }, () => get(emulator(), `/guilds/${DEMO_IDS.community}`)),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array<number>(60).fill(200));
      expect(limitHeaders(answers[59])).toEqual({
        'X-RateLimit-Bucket': bucketOf(GUILD_ROUTE),
        'X-RateLimit-Limit': null,
        'X-RateLimit-Remaining': null,
        'X-RateLimit-Reset': null,
        'X-RateLimit-Reset-After': null,
        'X-RateLimit-Scope': null,
        'X-RateLimit-Global': null,
        'Retry-After': null,
      });
      expect(emulator().invalidAnswers()).toBe(0);
    });
  });
});

describe('demo mode with EMULATOR_RATE_LIMITS=true', () => {
  const t = useTestApp({ env: { EMULATOR_RATE_LIMITS: 'true' } });

  it('boots, and its emulator answers with the rate-limit headers and enforces them', async () => {
    const lookup = await t().app.get(PlatformService).getGuild(DEMO_IDS.botLab);
    expect(lookup).toMatchObject({ found: true, value: { id: DEMO_IDS.botLab } });
    const emulator = emulatorOf(t());
    const before = emulator.requests.length;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => get(emulator, `/guilds/${DEMO_IDS.community}`)),
    );
    const passed = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    // Five a second per guild for the bot (fewer here if the service had just read this guild).
    expect(passed.length).toBeLessThanOrEqual(5);
    expect(refused).toHaveLength(10 - passed.length);
    expect(limitHeaders(answers[0])).toMatchObject({
      'X-RateLimit-Bucket': bucketOf(GUILD_ROUTE),
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Reset-After': expect.stringMatching(/^(0\.\d{3}|1\.000)$/),
      'X-RateLimit-Reset': expect.stringMatching(/^\d{10}\.\d{3}$/),
    });
    expect(refused[0].body).toEqual({
      message: RATE_LIMITED,
      retry_after: expect.any(Number),
      global: false,
      code: 0,
    });
    expect(refused[0].headers.get('X-RateLimit-Scope')).toBe('user');
    const logged = emulator.requests.slice(before).map((request) => request.status);
    expect(logged.filter((status) => status === 429)).toHaveLength(refused.length);
  });
});
