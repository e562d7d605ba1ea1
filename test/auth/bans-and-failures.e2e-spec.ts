import { UsersService } from 'src/users/users.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

const ME = '/sessions/@me';

describe('a banned user', () => {
  const t = useTestApp();

  it('gets 403 ApiBanned on every call, at once, until unbanned', async () => {
    const login = await loginAs(t(), DEMO_IDS.bob);
    const api = await createApiToken(t(), login.token);
    await t().http().get(ME).set('Authorization', login.token).expect(200);
    await t().http().get(ME).set('Authorization', api.token).expect(200);

    expect(await t().app.get(UsersService).setState(DEMO_IDS.bob, 'banned')).toBe('normal');
    for (const token of [login.token, api.token]) {
      for (const path of [ME, '/sessions']) {
        const res = await t().http().get(path).set('Authorization', token).expect(403);
        expect(res.body).toEqual({
          message: 'This account is banned from this service',
          code: 'ApiBanned',
        });
      }
    }
    await t()
      .http()
      .post('/sessions')
      .set('Authorization', login.token)
      .send({ name: 'x', type: 'api', expiry: 60 })
      .expect(403);

    await t().app.get(UsersService).setState(DEMO_IDS.bob, 'normal');
    await t().http().get(ME).set('Authorization', api.token).expect(200);
  });

  it('can be banned before logging in once: the first login is refused, and no session made', async () => {
    expect(await t().app.get(UsersService).setState(DEMO_IDS.dave, 'banned')).toBeNull();
    const code = await t().http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.dave}`).expect(200);
    const res = await t()
      .http()
      .post('/oauth2')
      .send({ code: code.body.code, redirect_uri: code.body.redirect_uri })
      .expect(403);
    expect(res.body).toEqual({
      message: 'This account is banned from this service',
      code: 'ApiBanned',
    });
    const sessions = await databaseOf(t()).query(
      'SELECT count(*)::int AS count FROM sessions WHERE user_id = $1',
      [DEMO_IDS.dave],
    );
    expect(sessions).toEqual([{ count: 0 }]);
  });
});

describe('when the session store fails', () => {
  const t = useTestApp();

  it('answers 500 InternalAuthError for a token it cannot check, and recovers', async () => {
    const login = await loginAs(t());
    const unchecked = await createApiToken(t(), login.token);
    await t().http().get(ME).set('Authorization', login.token).expect(200);
    // Unreachable store: the connection pool is gone. `unchecked` has never been used, so it is not
    // cached and must be looked up.
    const database = databaseOf(t());
    await database.destroy();
    try {
      const res = await t().http().get(ME).set('Authorization', unchecked.token).expect(500);
      expect(res.body).toEqual({
        message: 'The authentication system is unavailable; try again later',
        code: 'InternalAuthError',
        error_id: expect.any(String),
      });
      // A session resolved before the failure is served from the cache: no database on the hot path.
      await t().http().get(ME).set('Authorization', login.token).expect(200);
    } finally {
      await database.initialize();
    }
    await t().http().get(ME).set('Authorization', unchecked.token).expect(200);
  });
});
