import type { Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf, emulatorOf } from 'test/support/auth';
import { DEMO_REDIRECT } from 'test/support/platform';
import { useTestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

describe('POST /oauth2', () => {
  const t = useTestApp();

  const code = (scopes?: string[], userId: string = DEMO_IDS.demoUser): string =>
    emulatorOf(t()).issueCode({ userId, scopes, redirectUri: DEMO_REDIRECT });
  const sessionsOf = async (userId: string): Promise<number> =>
    (
      await databaseOf(t()).query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`,
        [userId],
      )
    )[0].n;

  it('logs in: a login session, the user stored, the grant encrypted', async () => {
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: code(), redirect_uri: DEMO_REDIRECT })
      .expect(200);
    expect(res.body).toEqual({
      user_id: DEMO_IDS.demoUser,
      token: expect.stringMatching(/^arl_[A-Za-z0-9_-]{43}$/),
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expiry: expect.any(String),
      user: {
        id: DEMO_IDS.demoUser,
        username: 'demo_user',
        global_name: 'Demo User',
        avatar: '5f0c8d1a2b3c4d5e6f708192a3b4c5d6',
      },
    });
    // LOGIN_SESSION_TTL: 7 days.
    const ttl = new Date(res.body.expiry).getTime() - Date.now();
    expect(Math.abs(ttl - 604_800_000)).toBeLessThan(60_000);

    const [user] = await databaseOf(t()).query<Record<string, unknown>[]>(
      `SELECT id, state, username, grant_access_token, grant_refresh_token, grant_scopes, grant_state
         FROM users WHERE id = $1`,
      [DEMO_IDS.demoUser],
    );
    expect(user).toMatchObject({
      id: DEMO_IDS.demoUser,
      state: 'normal',
      username: 'demo_user',
      grant_scopes: 'identify guilds guilds.members.read',
      grant_state: 'active',
    });
    expect(Buffer.isBuffer(user.grant_access_token)).toBe(true);
    const [session] = await databaseOf(t()).query<Record<string, unknown>[]>(
      `SELECT type, name, state FROM sessions WHERE id = $1`,
      [res.body.session_id],
    );
    expect(session).toEqual({ type: 'login', name: null, state: 'active' });
  });

  it('refuses a redirect_uri that is not allowed exactly, with 403 Restricted', async () => {
    for (const redirect of [
      `${DEMO_REDIRECT}?x=1`,
      'https://evil.example/cb',
      `${DEMO_REDIRECT}/`,
    ]) {
      const res = await t()
        .http()
        .post('/oauth2')
        .send({ code: code(), redirect_uri: redirect })
        .expect(403);
      expect(res.body.code).toBe('Restricted');
    }
  });

  it.each([
    ['a code shorter than 3 characters', { code: 'ab', redirect_uri: DEMO_REDIRECT }],
    ['a code longer than 256 characters', { code: 'a'.repeat(257), redirect_uri: DEMO_REDIRECT }],
    ['a missing code', { redirect_uri: DEMO_REDIRECT }],
    ['a missing redirect_uri', { code: 'abcdef' }],
    ['a numeric code', { code: 123456, redirect_uri: DEMO_REDIRECT }],
    ['a null code', { code: null, redirect_uri: DEMO_REDIRECT }],
    ['an extra field', { code: 'abcdef', redirect_uri: DEMO_REDIRECT, admin: true }],
  ])('refuses %s with 400 BadRequest', async (_label, body) => {
    const res = await t().http().post('/oauth2').send(body).expect(400);
    expect(res.body.code).toBe('BadRequest');
  });

  it('refuses a code already used, without asking the platform again', async () => {
    const once = code();
    await t().http().post('/oauth2').send({ code: once, redirect_uri: DEMO_REDIRECT }).expect(200);
    const before = emulatorOf(t()).countRequests('POST /oauth2/token');
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: once, redirect_uri: DEMO_REDIRECT })
      .expect(400);
    expect(res.body).toEqual({
      message: 'This authorization code was already used; start the login again',
      code: 'BadRequest',
    });
    expect(emulatorOf(t()).countRequests('POST /oauth2/token')).toBe(before);
  });

  it("maps the platform's invalid_grant to 400 BadRequest, and answers the same exchange again without asking the platform", async () => {
    const before = emulatorOf(t()).countRequests('POST /oauth2/token');
    // The later attempts are refused as the platform refused the first, not "already used", and
    // cost no exchange: a made-up code costs one however often it is sent.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const res = await t()
        .http()
        .post('/oauth2')
        .send({ code: 'never-issued-code', redirect_uri: DEMO_REDIRECT })
        .expect(400);
      expect(res.body).toEqual({
        message: 'The authorization code is invalid or expired; start the login again',
        code: 'BadRequest',
      });
    }
    expect(emulatorOf(t()).countRequests('POST /oauth2/token')).toBe(before + 1);
  });

  describe('PKCE (RFC 7636)', () => {
    // RFC 7636 appendix B's verifier and its S256 challenge.
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const s256 = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const pkceCode = (challenge: string, method: 'S256' | 'plain' = 'S256'): string =>
      emulatorOf(t()).issueCode({
        userId: DEMO_IDS.demoUser,
        redirectUri: DEMO_REDIRECT,
        challenge: { challenge, method },
      });
    const login = (body: object): Test => t().http().post('/oauth2').send(body);

    it('passes the code_verifier to the token exchange: the platform accepts the right one', async () => {
      const res = await login({
        code: pkceCode(s256),
        redirect_uri: DEMO_REDIRECT,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
      expect(res.body.user_id).toBe(DEMO_IDS.demoUser);
      const plain = await login({
        code: pkceCode(verifier, 'plain'),
        redirect_uri: DEMO_REDIRECT,
        code_verifier: verifier,
      });
      expect(plain.status).toBe(200);
    });

    it.each([
      ['a wrong verifier', { code_verifier: verifier.replace('d', 'e') }],
      ['no verifier', {}],
    ])(
      'answers 400 BadRequest for %s, as the platform refuses the exchange',
      async (_name, extra) => {
        const res = await login({ code: pkceCode(s256), redirect_uri: DEMO_REDIRECT, ...extra });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          message: 'The authorization code is invalid or expired; start the login again',
          code: 'BadRequest',
        });
      },
    );

    it('keeps a code whose exchange was refused for its verifier: the rightful exchange works once', async () => {
      const pending = pkceCode(s256);
      const exchange = (extra: object): Test =>
        login({ code: pending, redirect_uri: DEMO_REDIRECT, ...extra });
      const invalid = {
        message: 'The authorization code is invalid or expired; start the login again',
        code: 'BadRequest',
      };
      const exchanges = emulatorOf(t()).countRequests('POST /oauth2/token');
      for (const attempt of [{}, { code_verifier: verifier.replace('d', 'e') }, {}]) {
        const refused = await exchange(attempt);
        expect({ status: refused.status, body: refused.body }).toEqual({
          status: 400,
          body: invalid,
        });
      }
      // The third attempt repeats the first: answered as it was, without an exchange.
      expect(emulatorOf(t()).countRequests('POST /oauth2/token') - exchanges).toBe(2);
      const right = await exchange({ code_verifier: verifier });
      expect(right.status).toBe(200);
      expect(right.body.user_id).toBe(DEMO_IDS.demoUser);
      // Spent: a replay, with or without the verifier, is refused here without a platform call.
      const before = emulatorOf(t()).countRequests('POST /oauth2/token');
      for (const attempt of [{ code_verifier: verifier }, {}]) {
        const replay = await exchange(attempt);
        expect({ status: replay.status, body: replay.body }).toEqual({
          status: 400,
          body: {
            message: 'This authorization code was already used; start the login again',
            code: 'BadRequest',
          },
        });
      }
      expect(emulatorOf(t()).countRequests('POST /oauth2/token')).toBe(before);
    });

    it('lets the rightful exchange through while a refused one of the same code is under way', async () => {
      const pending = pkceCode(s256);
      // The exchange without the verifier reaches the platform slowly, and is refused there.
      faultsOf(emulatorOf(t())).inject('POST /oauth2/token', { kind: 'hang', delayMs: 400 });
      const refused = Promise.resolve(login({ code: pending, redirect_uri: DEMO_REDIRECT }));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const right = await login({
        code: pending,
        redirect_uri: DEMO_REDIRECT,
        code_verifier: verifier,
      });
      expect((await refused).status).toBe(400);
      expect(right.status).toBe(200);
      expect(right.body.user_id).toBe(DEMO_IDS.demoUser);
    });

    it('says so when a verifier is sent for a code issued without a challenge, and keeps the code', async () => {
      const plainCode = code();
      const refused = await login({
        code: plainCode,
        redirect_uri: DEMO_REDIRECT,
        code_verifier: verifier,
      });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 400,
        body: {
          message:
            'code_verifier was sent, but this code was issued without a code_challenge: exchange it without code_verifier',
          code: 'BadRequest',
        },
      });
      const right = await login({ code: plainCode, redirect_uri: DEMO_REDIRECT });
      expect(right.status).toBe(200);
    });

    it.each([
      ['too short', 'a'.repeat(42)],
      ['too long', 'a'.repeat(129)],
      ['outside the unreserved characters', `${'a'.repeat(42)}+`],
      ['not a string', 12345],
    ])('refuses a code_verifier %s with 400 before calling the platform', async (_name, bad) => {
      const before = emulatorOf(t()).countRequests('POST /oauth2/token');
      const res = await login({ code: code(), redirect_uri: DEMO_REDIRECT, code_verifier: bad });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'BadRequest',
        details: [
          {
            field: 'code_verifier',
            message:
              'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636)',
          },
        ],
      });
      expect(emulatorOf(t()).countRequests('POST /oauth2/token')).toBe(before);
    });
  });

  it('requires the identify and guilds scopes, and revokes a grant without them', async () => {
    const before = emulatorOf(t()).countRequests('POST /oauth2/token/revoke');
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: code(['identify']), redirect_uri: DEMO_REDIRECT })
      .expect(400);
    expect(res.body.message).toBe('The authorization must grant the scopes identify and guilds');
    expect(emulatorOf(t()).countRequests('POST /oauth2/token/revoke')).toBe(before + 1);
  });

  it('answers 500 InternalError when the platform fails, without its body', async () => {
    faultsOf(emulatorOf(t())).inject('POST /oauth2/token', { kind: 'error', status: 502 }, 3);
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: code(), redirect_uri: DEMO_REDIRECT })
      .expect(500);
    expect(res.body).toEqual({
      message: 'The chat platform is unavailable; try again later',
      code: 'InternalError',
      error_id: expect.any(String),
    });
  });

  describe('banned users', () => {
    it('are refused before anything is created, with 403 ApiBanned', async () => {
      const first = await t()
        .http()
        .post('/oauth2')
        .send({ code: code(undefined, DEMO_IDS.carol), redirect_uri: DEMO_REDIRECT })
        .expect(200);
      await databaseOf(t()).query(`UPDATE users SET state = 'banned' WHERE id = $1`, [
        DEMO_IDS.carol,
      ]);
      const sessionsBefore = await sessionsOf(DEMO_IDS.carol);
      const res = await t()
        .http()
        .post('/oauth2')
        .send({ code: code(undefined, DEMO_IDS.carol), redirect_uri: DEMO_REDIRECT })
        .expect(403);
      expect(res.body).toEqual({
        message: 'This account is banned from this service',
        code: 'ApiBanned',
      });
      expect(await sessionsOf(DEMO_IDS.carol)).toBe(sessionsBefore);
      expect(first.body.user_id).toBe(DEMO_IDS.carol);
    });
  });

  it('is public: a bad Authorization header does not matter', async () => {
    await t()
      .http()
      .post('/oauth2')
      .set('Authorization', 'Bearer garbage')
      .send({ code: code(), redirect_uri: DEMO_REDIRECT })
      .expect(200);
  });
});
