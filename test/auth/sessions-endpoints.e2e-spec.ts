import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, emulatorOf, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

describe('/sessions', () => {
  const t = useTestApp({ env: { API_TOKEN_MAX_TTL: '86400', MAX_API_TOKENS_PER_USER: '3' } });
  let login: TestLogin;

  beforeAll(async () => {
    login = await loginAs(t());
  });

  describe('GET /sessions/@me', () => {
    it('describes the session making the request', async () => {
      const api = await createApiToken(t(), login.token, { name: 'reporter' });
      const res = await t().http().get('/sessions/@me').set('Authorization', api.token).expect(200);
      expect(res.body).toEqual({
        id: api.sessionId,
        user_id: DEMO_IDS.demoUser,
        type: 'api',
        name: 'reporter',
        state: 'normal',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        expiry: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      await t()
        .http()
        .delete(`/sessions/${api.sessionId}`)
        .set('Authorization', login.token)
        .expect(204);
    });
  });

  describe('GET /sessions', () => {
    it("lists the user's live sessions, newest first, never a token, only the user's own", async () => {
      const other = await loginAs(t(), DEMO_IDS.alice);
      const first = await createApiToken(t(), login.token, { name: 'first' });
      const second = await createApiToken(t(), login.token, { name: 'second' });
      const expired = await createApiToken(t(), login.token, { name: 'expired' });
      await databaseOf(t()).query(
        `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [expired.sessionId],
      );

      const res = await t()
        .http()
        .get('/sessions')
        .set('Authorization', `Bearer ${login.token}`)
        .expect(200);
      const sessions = res.body.sessions as Record<string, unknown>[];
      expect(sessions.map((s) => s.id)).toEqual([
        second.sessionId,
        first.sessionId,
        login.sessionId,
      ]);
      expect(sessions[2]).toEqual({
        id: login.sessionId,
        name: null,
        user_id: DEMO_IDS.demoUser,
        type: 'login',
        created_at: expect.any(String),
        expiry: expect.any(String),
        current: true,
        // This very request used it.
        last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        scope: null,
      });
      expect(sessions[0]).toMatchObject({
        name: 'second',
        type: 'api',
        current: false,
        last_used_at: null,
        scope: null,
      });
      expect(res.text).not.toContain(first.token.slice(4));
      expect(res.text).not.toContain('token');
      expect(res.text).not.toContain(other.sessionId);

      for (const s of [first, second]) {
        await t()
          .http()
          .delete(`/sessions/${s.sessionId}`)
          .set('Authorization', login.token)
          .expect(204);
      }
    });
  });

  describe('POST /sessions', () => {
    it('creates an API token, shown once, with 201', async () => {
      const res = await t()
        .http()
        .post('/sessions')
        .set('Authorization', login.token)
        .send({ name: 'nightly sync', type: 'api', expiry: 3600 })
        .expect(201);
      expect(res.body).toEqual({
        user_id: DEMO_IDS.demoUser,
        token: expect.stringMatching(/^ara_[A-Za-z0-9_-]{43}$/),
        session_id: expect.any(String),
        expiry: expect.any(String),
        user: null,
      });
      const ttl = new Date(res.body.expiry).getTime() - Date.now();
      expect(Math.abs(ttl - 3_600_000)).toBeLessThan(60_000);
      await t().http().get('/sessions/@me').set('Authorization', res.body.token).expect(200);
      await t()
        .http()
        .delete(`/sessions/${res.body.session_id}`)
        .set('Authorization', login.token)
        .expect(204);
    });

    it.each([
      ['an empty name', { name: '', type: 'api', expiry: 3600 }, 'name'],
      ['a 65-character name', { name: 'n'.repeat(65), type: 'api', expiry: 3600 }, 'name'],
      ['a name with control characters', { name: 'a\u0000b', type: 'api', expiry: 3600 }, 'name'],
      ['a numeric name', { name: 42, type: 'api', expiry: 3600 }, 'name'],
      ['type login', { name: 'x', type: 'login', expiry: 3600 }, 'type'],
      ['a missing type', { name: 'x', expiry: 3600 }, 'type'],
      ['an expiry under 60 s', { name: 'x', type: 'api', expiry: 59 }, 'expiry'],
      ['an expiry over API_TOKEN_MAX_TTL', { name: 'x', type: 'api', expiry: 86401 }, 'expiry'],
      ['a fractional expiry', { name: 'x', type: 'api', expiry: 3600.5 }, 'expiry'],
      ['a string expiry', { name: 'x', type: 'api', expiry: '3600' }, 'expiry'],
      ['a negative expiry', { name: 'x', type: 'api', expiry: -5 }, 'expiry'],
      ['an extra field', { name: 'x', type: 'api', expiry: 3600, user_id: '1' }, 'user_id'],
    ])('refuses %s with 400 BadRequest naming the field', async (_label, body, field) => {
      const res = await t()
        .http()
        .post('/sessions')
        .set('Authorization', login.token)
        .send(body)
        .expect(400);
      expect(res.body.code).toBe('BadRequest');
      expect((res.body.details as { field: string }[]).map((d) => d.field)).toContain(field);
    });

    it('refuses a body that is not an object', async () => {
      const res = await t()
        .http()
        .post('/sessions')
        .set('Authorization', login.token)
        .set('Content-Type', 'application/json')
        .send('["api"]')
        .expect(400);
      expect(res.body.code).toBe('BadRequest');
    });

    it('caps the live API tokens of a user at MAX_API_TOKENS_PER_USER, even concurrently', async () => {
      const carol = await loginAs(t(), DEMO_IDS.carol);
      const attempts = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          t()
            .http()
            .post('/sessions')
            .set('Authorization', carol.token)
            .send({ name: `t${i}`, type: 'api', expiry: 600 }),
        ),
      );
      expect(attempts.filter((r) => r.status === 201)).toHaveLength(3);
      const refused = attempts.filter((r) => r.status === 400);
      expect(refused).toHaveLength(2);
      expect(refused[0].body).toEqual({
        message: 'You already have 3 API tokens, the most allowed; delete one first',
        code: 'BadRequest',
      });
    });
  });

  describe('DELETE /sessions/{session_id}', () => {
    it('refuses a malformed id with 400 BadRequest', async () => {
      for (const id of ['not-a-uuid', '1234', `${'a'.repeat(36)}`, "' OR 1=1"]) {
        const res = await t()
          .http()
          .delete(`/sessions/${encodeURIComponent(id)}`)
          .set('Authorization', login.token)
          .expect(400);
        expect(res.body).toEqual({ message: 'session_id must be a UUID', code: 'BadRequest' });
      }
    });

    it("answers an unknown session and another user's session alike, with 404 NotFound", async () => {
      const alice = await loginAs(t(), DEMO_IDS.alice);
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const id of [unknown, alice.sessionId]) {
        const res = await t()
          .http()
          .delete(`/sessions/${id}`)
          .set('Authorization', login.token)
          .expect(404);
        expect(res.body).toEqual({ message: `You have no session ${id}`, code: 'NotFound' });
      }
      // Alice's session is untouched.
      await t().http().get('/sessions/@me').set('Authorization', alice.token).expect(200);
    });

    it('lets a session delete itself', async () => {
      const own = await loginAs(t());
      await t()
        .http()
        .delete(`/sessions/${own.sessionId}`)
        .set('Authorization', own.token)
        .expect(204);
      await t().http().get('/sessions/@me').set('Authorization', own.token).expect(401);
    });

    it("revokes the platform grant with the user's last login session", async () => {
      const dave1 = await loginAs(t(), DEMO_IDS.dave);
      const dave2 = await loginAs(t(), DEMO_IDS.dave);
      const revokes = (): number => emulatorOf(t()).countRequests('POST /oauth2/token/revoke');
      const before = revokes();
      await t()
        .http()
        .delete(`/sessions/${dave1.sessionId}`)
        .set('Authorization', dave1.token)
        .expect(204);
      expect(revokes()).toBe(before);
      await t()
        .http()
        .delete(`/sessions/${dave2.sessionId}`)
        .set('Authorization', dave2.token)
        .expect(204);
      expect(revokes()).toBe(before + 1);
      const [grant] = await databaseOf(t()).query<Record<string, unknown>[]>(
        `SELECT grant_access_token, grant_refresh_token, grant_state FROM users WHERE id = $1`,
        [DEMO_IDS.dave],
      );
      expect(grant).toEqual({
        grant_access_token: null,
        grant_refresh_token: null,
        grant_state: 'dead',
      });
    });
  });

  it('never shows a token in any response but the creating one, nor in the log', async () => {
    const api = await createApiToken(t(), login.token);
    const responses = await Promise.all([
      t().http().get('/sessions').set('Authorization', login.token),
      t().http().get('/sessions/@me').set('Authorization', login.token),
      t().http().get('/sessions/@me').set('Authorization', api.token),
    ]);
    for (const res of responses) {
      expect(res.text).not.toContain(api.token.slice(4));
      expect(res.text).not.toContain(login.token.slice(4));
    }
    expect(t().logs.text()).not.toContain(api.token.slice(4));
    expect(t().logs.text()).not.toContain(login.token.slice(4));
  });
});
