import { GrantService } from 'src/auth/grant.service';
import { UsersService } from 'src/users/users.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf } from 'test/support/auth';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';

/**
 * Two instances sharing PostgreSQL, Redis and the platform, as behind a load balancer. Needs the
 * servers: runs in CI's second pass (DATABASE_URL=postgres://…, REDIS_URL set).
 */
const sharedServers = process.env.REDIS_URL && process.env.DATABASE_URL?.startsWith('postgres');
const describeShared = sharedServers ? describe : describe.skip;

describeShared('two instances', () => {
  const platform = useEmulator();
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      ...liveModeEnv(platform()),
      REDIS_KEY_PREFIX: `multi-${Date.now()}:`,
    };
    const shared = { ...database, drop: () => Promise.resolve() };
    a = await createTestApp({ database: shared, env });
    b = await createTestApp({ database: shared, env });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  async function login(app: TestApp, userId: string): Promise<{ token: string; id: string }> {
    const code = platform().issueCode({ userId, redirectUri: DEMO_REDIRECT });
    const res = await app
      .http()
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    return { token: res.body.token, id: res.body.session_id };
  }

  it('refuses an authorization code reused on another instance', async () => {
    const code = platform().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
    await a.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT }).expect(200);
    const before = platform().countRequests('POST /oauth2/token');
    const res = await b
      .http()
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(400);
    expect(res.body.message).toBe(
      'This authorization code was already used; start the login again',
    );
    expect(platform().countRequests('POST /oauth2/token')).toBe(before);
  });

  it('refuses a token revoked on one instance at once on the other', async () => {
    const session = await login(a, DEMO_IDS.demoUser);
    await b.http().get('/sessions/@me').set('Authorization', session.token).expect(200);
    await a
      .http()
      .delete(`/sessions/${session.id}`)
      .set('Authorization', session.token)
      .expect(204);
    const res = await b.http().get('/sessions/@me').set('Authorization', session.token).expect(401);
    expect(res.body.code).toBe('InvalidToken');
  });

  it('refuses a user banned on one instance at once on the other', async () => {
    const session = await login(a, DEMO_IDS.bob);
    await b.http().get('/sessions/@me').set('Authorization', session.token).expect(200);
    await a.app.get(UsersService).setState(DEMO_IDS.bob, 'banned');
    const res = await b.http().get('/sessions/@me').set('Authorization', session.token).expect(403);
    expect(res.body.code).toBe('ApiBanned');
    await a.app.get(UsersService).setState(DEMO_IDS.bob, 'normal');
    await b.http().get('/sessions/@me').set('Authorization', session.token).expect(200);
  });

  it('refreshes a grant once when both instances need it at the same time', async () => {
    await login(a, DEMO_IDS.alice);
    await databaseOf(a).query(
      `UPDATE users SET grant_expires_at = now() - interval '1 second' WHERE id = $1`,
      [DEMO_IDS.alice],
    );
    const before = platform().countRequests('POST /oauth2/token');
    const tokens = await Promise.all(
      [a, b, a, b, a, b].map((app) => app.app.get(GrantService).accessTokenFor(DEMO_IDS.alice)),
    );
    expect(new Set(tokens).size).toBe(1);
    expect(platform().countRequests('POST /oauth2/token')).toBe(before + 1);
  });
});
