import { DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { SessionsService } from 'src/sessions/sessions.service';
import { UsersService } from 'src/users/users.service';
import { createApiToken, databaseOf, loginOn } from 'test/support/auth';
import { liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

/**
 * A platform user id is an unsigned 64-bit snowflake (Discord's OpenAPI document, `SnowflakeType`):
 * a login, its API tokens and the CLI's tokens hold every such id exactly, up to 2^64-1, where
 * PostgreSQL's signed `bigint` stops at 2^63-1.
 */
const IDS = {
  'the largest (2^64-1)': '18446744073709551615',
  'just past signed bigint (2^63)': '9223372036854775808',
  'one more (2^63+1)': '9223372036854775809',
};

const SEED: EmulatorSeed = {
  ...DEMO_SEED,
  users: [
    ...DEMO_SEED.users,
    ...Object.values(IDS).map((id) => ({
      id,
      username: `user_${id}`,
      discriminator: '0',
      global_name: null,
      avatar: null,
    })),
  ],
};

const ME = '/sessions/@me';

describe('user ids across the whole unsigned 64-bit range', () => {
  const emulator = useEmulator(SEED);
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({ env: liveModeEnv(emulator()) });
  });
  afterAll(() => app?.close());

  it.each(Object.entries(IDS))(
    '%s: a login answers 200 and its session, API tokens and stored user keep the id exact',
    async (_, userId) => {
      const login = await loginOn(app, emulator(), userId);
      const me = await app.http().get(ME).set('Authorization', `Bearer ${login}`).expect(200);
      expect(me.body).toMatchObject({ user_id: userId, type: 'login' });

      const api = await createApiToken(app, login, { name: 'script' });
      expect(api.userId).toBe(userId);
      const apiMe = await app.http().get(ME).set('Authorization', `Bearer ${api.token}`);
      expect(apiMe.status).toBe(200);
      expect(apiMe.body).toMatchObject({ id: api.sessionId, user_id: userId, type: 'api' });

      const listed = await app.http().get('/sessions').set('Authorization', `Bearer ${login}`);
      expect(listed.status).toBe(200);
      const { sessions } = listed.body as { sessions: { user_id: string }[] };
      expect(sessions.map((row) => row.user_id)).toEqual([userId, userId]);

      const stored = await databaseOf(app).query<{ id: string; sessions: number }[]>(
        `SELECT u.id::text AS id, count(s.id)::int AS sessions
           FROM users u JOIN sessions s ON s.user_id = u.id WHERE u.id = $1 GROUP BY u.id`,
        [userId],
      );
      expect(stored).toEqual([{ id: userId, sessions: 2 }]);
    },
  );

  it('the CLI path (tokens:create, users:ban) stores the user, a token that authenticates as it, and a ban', async () => {
    const userId = '18446744073709551614';
    await app.app.get(UsersService).ensureExists(userId);
    const { session, token } = await app.app
      .get(SessionsService)
      .issueApiToken(userId, 'cli', 3600);
    expect(session.userId).toBe(userId);
    const me = await app.http().get(ME).set('Authorization', `Bearer ${token}`).expect(200);
    expect(me.body).toMatchObject({ id: session.id, user_id: userId, name: 'cli', type: 'api' });
    const live = await app.app.get(SessionsService).listLive(userId);
    expect(live.map((row) => row.userId)).toEqual([userId]);

    // users:ban and users:unban reach the same user.
    expect(await app.app.get(UsersService).setState(userId, 'banned')).toBe('normal');
    const banned = await app.http().get(ME).set('Authorization', `Bearer ${token}`).expect(403);
    expect(banned.body).toEqual({
      message: 'This account is banned from this service',
      code: 'ApiBanned',
    });
    expect(await app.app.get(UsersService).setState(userId, 'normal')).toBe('banned');
    await app.http().get(ME).set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('compares ids as numbers: 2^63 sorts before 2^64-1, and 9 before 10', async () => {
    await app.app.get(UsersService).ensureExists('9');
    await app.app.get(UsersService).ensureExists('10');
    const rows = await databaseOf(app).query<{ id: string }[]>(
      `SELECT id::text AS id FROM users WHERE id IN (9, 10, $1, $2) ORDER BY users.id`,
      [IDS['just past signed bigint (2^63)'], IDS['the largest (2^64-1)']],
    );
    expect(rows.map((row) => row.id)).toEqual([
      '9',
      '10',
      IDS['just past signed bigint (2^63)'],
      IDS['the largest (2^64-1)'],
    ]);
  });
});
