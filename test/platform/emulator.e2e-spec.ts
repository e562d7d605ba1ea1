import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { DEMO_REDIRECT, useEmulator } from 'test/support/platform';
import { faultsOf } from 'test/support/emulator-faults';

const BOT = { Authorization: `Bot ${DEMO_SEED.application.bot_token}` };
const BASIC = {
  Authorization: `Basic ${Buffer.from(`${DEMO_SEED.application.id}:${DEMO_SEED.application.secret}`).toString('base64')}`,
};
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

/** The emulator's own answers, over plain HTTP: they must be the platform's. */
describe('platform emulator', () => {
  const emulator = useEmulator();

  async function call(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${emulator().apiUrl}/v10${path}`, { method, headers, body });
    return { status: res.status, body: await res.json() };
  }

  const botRoutes: [string, string][] = [
    ['GET', '/users/@me'],
    ['GET', '/users/@me/guilds'],
    ['GET', `/guilds/${DEMO_IDS.community}`],
    ['GET', `/guilds/${DEMO_IDS.community}/channels`],
    ['GET', `/guilds/${DEMO_IDS.community}/members/${DEMO_IDS.demoUser}`],
    ['GET', `/applications/${DEMO_IDS.bot}/commands`],
    ['PUT', `/applications/${DEMO_IDS.bot}/commands`],
  ];

  it.each(botRoutes)('%s %s refuses a request without Authorization', async (method, path) => {
    expect(await call(method, path)).toEqual({
      status: 401,
      body: { message: '401: Unauthorized', code: 0 },
    });
  });

  it.each(botRoutes)('%s %s refuses a wrong bot token', async (method, path) => {
    expect((await call(method, path, { Authorization: 'Bot nope' })).status).toBe(401);
  });

  it.each([
    [`/guilds/${DEMO_IDS.community}`],
    [`/guilds/${DEMO_IDS.community}/members/${DEMO_IDS.demoUser}`],
  ])('GET %s refuses a user token (bot-only route)', async (path) => {
    const code = emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
    const grant = await call(
      'POST',
      '/oauth2/token',
      { ...BASIC, ...FORM },
      `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(DEMO_REDIRECT)}`,
    );
    const token = (grant.body as { access_token: string }).access_token;
    expect((await call('GET', path, { Authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it.each([
    ['an unknown guild', '/guilds/42', 404, { message: 'Unknown Guild', code: 10004 }],
    ['a malformed guild id', '/guilds/abc', 404, { message: 'Unknown Guild', code: 10004 }],
    [
      'a guild without the bot',
      `/guilds/${DEMO_IDS.sandbox}`,
      403,
      { message: 'Missing Access', code: 50001 },
    ],
    [
      'a non-member',
      `/guilds/${DEMO_IDS.community}/members/${DEMO_IDS.dave}`,
      404,
      { message: 'Unknown Member', code: 10007 },
    ],
    [
      'an unknown user',
      `/guilds/${DEMO_IDS.community}/members/42`,
      404,
      { message: 'Unknown User', code: 10013 },
    ],
    ['an unknown route', '/nope', 404, { message: '404: Not Found', code: 0 }],
    [
      "another application's commands",
      '/applications/42/commands',
      403,
      { message: 'Missing Access', code: 50001 },
    ],
  ])('answers %s as the platform does', async (_label, path, status, body) => {
    expect(await call('GET', path, BOT)).toEqual({ status, body });
  });

  describe('token endpoint', () => {
    const exchange = (
      code: string,
      headers: Record<string, string> = { ...BASIC, ...FORM },
    ): Promise<{ status: number; body: unknown }> =>
      call(
        'POST',
        '/oauth2/token',
        headers,
        `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(DEMO_REDIRECT)}`,
      );

    it('accepts the client credentials in the form instead of Basic', async () => {
      const code = emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
      const res = await call(
        'POST',
        '/oauth2/token',
        FORM,
        new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: DEMO_REDIRECT,
          client_id: DEMO_SEED.application.id,
          client_secret: DEMO_SEED.application.secret,
        }).toString(),
      );
      expect(res.status).toBe(200);
    });

    it('answers invalid_client for a wrong secret', async () => {
      const wrong = `Basic ${Buffer.from(`${DEMO_SEED.application.id}:nope`).toString('base64')}`;
      expect(await exchange('x', { Authorization: wrong, ...FORM })).toEqual({
        status: 401,
        body: { error: 'invalid_client' },
      });
    });

    it('answers invalid_grant for a reused code', async () => {
      const code = emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
      expect((await exchange(code)).status).toBe(200);
      expect(await exchange(code)).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'Invalid "code" in request.' },
      });
    });

    it('refuses JSON bodies, as the platform does', async () => {
      const res = await call(
        'POST',
        '/oauth2/token',
        { ...BASIC, 'Content-Type': 'application/json' },
        JSON.stringify({ grant_type: 'authorization_code', code: 'x' }),
      );
      expect(res.status).toBe(400);
    });

    it('answers unsupported_grant_type for other grants', async () => {
      const res = await call('POST', '/oauth2/token', { ...BASIC, ...FORM }, 'grant_type=password');
      expect(res).toEqual({ status: 400, body: { error: 'unsupported_grant_type' } });
    });
  });

  it('answers a rate-limit fault with the platform headers and body', async () => {
    faultsOf(emulator()).inject('GET /users/@me', { kind: 'rate_limit', retryAfter: 1.5 });
    const res = await fetch(`${emulator().apiUrl}/v10/users/@me`, { headers: BOT });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset-after')).toBe('1.5');
    expect(await res.json()).toEqual({
      message: 'You are being rate limited.',
      retry_after: 1.5,
      global: false,
      code: 0,
    });
    // Once only: the next request is answered normally.
    expect((await call('GET', '/users/@me', BOT)).status).toBe(200);
  });

  it('serves the seeded thread only from the active-threads route', async () => {
    const channels = (await call('GET', `/guilds/${DEMO_IDS.community}/channels`, BOT)).body as {
      type: number;
    }[];
    expect(channels.some((c) => c.type === 11)).toBe(false);
    const threads = (await call('GET', `/guilds/${DEMO_IDS.community}/threads/active`, BOT))
      .body as { threads: { name: string; parent_id: string }[] };
    expect(threads.threads).toEqual([
      expect.objectContaining({ name: 'welcome-thread', parent_id: '1100000000000000124' }),
    ]);
  });
});

describe('platform emulator request log', () => {
  it('keeps the newest requests up to its bound, and still counts every one', async () => {
    const emulator = await PlatformEmulator.start(DEMO_SEED, {}, { maxLoggedRequests: 50 });
    try {
      for (let i = 0; i < 60; i++) {
        await fetch(`${emulator.apiUrl}/v10/users/@me`, {
          headers: { ...BOT, 'X-Nth': String(i) },
        });
      }
      await fetch(`${emulator.apiUrl}/v10/guilds/${DEMO_IDS.community}`, { headers: BOT });
      expect(emulator.requests).toHaveLength(50);
      expect(emulator.requests.at(-1)?.route).toBe('GET /guilds/:guild_id');
      expect(emulator.countRequests('GET /users/@me')).toBe(60);
      expect(emulator.countRequests('GET /guilds/:guild_id')).toBe(1);
    } finally {
      await emulator.close();
    }
  });
});
