import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, emulatorOf, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

const ALL = '8866461766385663';

const guildIds = (body: unknown): string[] =>
  (body as { guilds: { id: string }[] }).guilds.map((guild) => guild.id);

/** Requests the emulator saw on the guild-list route with a user's token, or with the bot's. */
function guildListCalls(t: TestApp, auth: 'bearer' | 'bot'): number {
  return emulatorOf(t).requests.filter(
    (request) => request.route === 'GET /users/@me/guilds' && request.auth === auth,
  ).length;
}

describe('GET /users/@me/guilds', () => {
  const t = useTestApp();

  it("lists the user's guilds and those the bot is in", async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const res = await t()
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expect(res.body).toEqual({
      guilds: [
        {
          id: DEMO_IDS.community,
          name: 'Demo Community',
          icon: `https://cdn.discordapp.com/icons/${DEMO_IDS.community}/a_9c1f0e3b2d4a5c6e7f8091a2b3c4d5e6.gif`,
          owner: false,
          permissions: expect.stringMatching(/^\d+$/),
        },
        {
          id: DEMO_IDS.sandbox,
          name: 'Demo Sandbox',
          icon: null,
          owner: true,
          permissions: ALL,
        },
      ],
      bot_in_guilds: [DEMO_IDS.community],
    });
  });

  it('serves API tokens too', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    const api = await createApiToken(t(), login.token);
    const res = await t()
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', api.token)
      .expect(200);
    expect(guildIds(res.body)).toEqual([DEMO_IDS.community, DEMO_IDS.botLab]);
    expect(res.body.bot_in_guilds).toEqual([DEMO_IDS.community, DEMO_IDS.botLab]);
  });

  it('caches the list per user; refresh=true reads it anew', async () => {
    const login = await loginAs(t(), DEMO_IDS.bob);
    const get = (query = ''): Promise<unknown> =>
      t()
        .http()
        .get(`/users/@me/guilds${query}`)
        .set('Authorization', `Bearer ${login.token}`)
        .expect(200);
    const before = guildListCalls(t(), 'bearer');
    await Promise.all(Array.from({ length: 10 }, () => get()));
    expect(guildListCalls(t(), 'bearer')).toBe(before + 1);
    await get('?refresh=false');
    expect(guildListCalls(t(), 'bearer')).toBe(before + 1);
    await get('?refresh=true');
    expect(guildListCalls(t(), 'bearer')).toBe(before + 2);
    // The refreshed list is what the cache holds now.
    await get();
    expect(guildListCalls(t(), 'bearer')).toBe(before + 2);
  });

  it("reads the bot's guild list once for many users", async () => {
    const before = guildListCalls(t(), 'bot');
    for (const user of [DEMO_IDS.alice, DEMO_IDS.dave]) {
      const login = await loginAs(t(), user);
      await t()
        .http()
        .get('/users/@me/guilds')
        .set('Authorization', `Bearer ${login.token}`)
        .expect(200);
    }
    expect(guildListCalls(t(), 'bot')).toBeLessThanOrEqual(before + 1);
  });

  it('refreshes an expired grant before reading the list', async () => {
    const login = await loginAs(t(), DEMO_IDS.dave);
    await databaseOf(t()).query(
      `UPDATE users SET grant_expires_at = now() - interval '1 second' WHERE id = $1`,
      [DEMO_IDS.dave],
    );
    const refreshes = emulatorOf(t()).countRequests('POST /oauth2/token');
    const res = await t()
      .http()
      .get('/users/@me/guilds?refresh=true')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expect(guildIds(res.body)).toEqual([DEMO_IDS.sandbox]);
    expect(emulatorOf(t()).countRequests('POST /oauth2/token')).toBe(refreshes + 1);
  });

  it('answers 403 "log in again" when the platform refuses the grant, and remembers it', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    faultsOf(emulatorOf(t())).inject('GET /users/@me/guilds', {
      kind: 'respond',
      status: 401,
      body: { message: '401: Unauthorized', code: 0 },
    });
    const relogin = {
      message: 'Your Discord authorization has expired or was revoked; log in again',
      code: 'Restricted',
    };
    const first = await t()
      .http()
      .get('/users/@me/guilds?refresh=true')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(403);
    expect(first.body).toEqual(relogin);
    const [row] = await databaseOf(t()).query<{ grant_state: string; token: Buffer | null }[]>(
      'SELECT grant_state, grant_access_token AS token FROM users WHERE id = $1',
      [DEMO_IDS.alice],
    );
    expect(row).toEqual({ grant_state: 'dead', token: null });
    const calls = guildListCalls(t(), 'bearer');
    const again = await t()
      .http()
      .get('/users/@me/guilds?refresh=true')
      .set('Authorization', `Bearer ${login.token}`)
      .expect(403);
    expect(again.body).toEqual(relogin);
    expect(guildListCalls(t(), 'bearer')).toBe(calls);
    // A new login brings a new grant.
    const fresh = await loginAs(t(), DEMO_IDS.alice);
    await t()
      .http()
      .get('/users/@me/guilds?refresh=true')
      .set('Authorization', `Bearer ${fresh.token}`)
      .expect(200);
  });

  // One login for the query checks: what they test is the query, not the login.
  let queryLogin: Promise<TestLogin> | undefined;
  it.each([
    ['?refresh=maybe', 'refresh'],
    ['?refresh=1', 'refresh'],
    ['?refresh=true&refresh=false', 'refresh'],
    ['?page=2', 'page'],
  ])('answers 400 for %s', async (query, field) => {
    queryLogin ??= loginAs(t(), DEMO_IDS.demoUser);
    const login = await queryLogin;
    const res = await t()
      .http()
      .get(`/users/@me/guilds${query}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(400);
    expect(res.body).toMatchObject({ code: 'BadRequest', details: [{ field }] });
  });

  it('refuses requests without a valid token', async () => {
    expect((await t().http().get('/users/@me/guilds').expect(401)).body.code).toBe('NoAuthToken');
    const bad = await t()
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', 'Bearer arl_nope')
      .expect(401);
    expect(bad.body.code).toBe('InvalidToken');
  });
});
