import passport from 'passport';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import { StrategyRunner } from 'src/auth/strategy-runner';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { SessionsService } from 'src/sessions/sessions.service';
import { LOGIN_SESSION } from 'test/fixtures/sessions';

const SESSION = LOGIN_SESSION;

const malformed = (): AppException =>
  new AppException(ErrorCode.InvalidToken, 'The Authorization header is malformed');

type Outcome = { session: unknown } | { error: unknown };

/** What passport's own `authenticate('bearer', { session: false }, callback)` reports. */
function underPassport(strategy: BearerStrategy, request: object): Promise<Outcome> {
  const authenticator = new passport.Authenticator().use('bearer', strategy);
  return new Promise((resolve, reject) => {
    const middleware = authenticator.authenticate(
      'bearer',
      { session: false },
      (error: unknown, session: unknown) =>
        resolve(error ? { error } : session ? { session } : { error: malformed() }),
    ) as (request: object, response: object, next: (error?: unknown) => void) => void;
    middleware({ ...request }, {}, reject);
  });
}

/** What the runner reports for the same strategy and request. */
function underRunner(strategy: BearerStrategy, request: object): Promise<Outcome> {
  return new StrategyRunner<AuthenticatedSession>(strategy, malformed).run({ ...request }).then(
    (session) => ({ session }),
    (error: unknown) => ({ error }),
  );
}

describe('StrategyRunner', () => {
  const bearer = { headers: { authorization: 'Bearer arl_token' } };

  it.each<[string, () => Promise<AuthenticatedSession | null>, object]>([
    ['a live session', () => Promise.resolve(SESSION), bearer],
    ['an unknown token', () => Promise.resolve(null), bearer],
    ['a banned user', () => Promise.resolve({ ...SESSION, userState: 'banned' }), bearer],
    ['a failing session store', () => Promise.reject(new Error('connection refused')), bearer],
    [
      'a second token in the query',
      () => Promise.resolve(SESSION),
      { ...bearer, query: { access_token: 'arl_other' } },
    ],
    [
      'a second token in the body',
      () => Promise.resolve(SESSION),
      { ...bearer, body: { access_token: 'arl_other' } },
    ],
    [
      'a header of three words',
      () => Promise.resolve(SESSION),
      { headers: { authorization: 'Bearer a b' } },
    ],
    ['no token at all', () => Promise.resolve(SESSION), { headers: {} }],
  ])('reports %s as passport does', async (_case, authenticate, request) => {
    const lookUp = jest.fn(authenticate);
    const strategy = new BearerStrategy({ authenticate: lookUp } as unknown as SessionsService);
    const expected = await underPassport(strategy, request);
    const calls = lookUp.mock.calls.length;
    const actual = await underRunner(strategy, request);
    expect(actual).toEqual(expected);
    // The strategy looked the token up as often under both.
    expect(lookUp.mock.calls.length).toBe(2 * calls);
  });

  it('runs each request on its own attempt, the strategy left as it was', async () => {
    const strategy = new BearerStrategy({
      authenticate: (token: string) =>
        Promise.resolve(token === 'arl_a' ? SESSION : { ...SESSION, id: 's2' }),
    } as unknown as SessionsService);
    const runner = new StrategyRunner<AuthenticatedSession>(strategy, malformed);
    const [a, b] = await Promise.all([
      runner.run({ headers: { authorization: 'Bearer arl_a' } }),
      runner.run({ headers: { authorization: 'Bearer arl_b' } }),
    ]);
    expect([a.id, b.id]).toEqual(['s1', 's2']);
    expect(Object.keys(strategy)).not.toEqual(expect.arrayContaining(['success', 'fail']));
  });

  it('leaves the request as it was (passport decorates it for its sessions)', async () => {
    const strategy = new BearerStrategy({
      authenticate: () => Promise.resolve(SESSION),
    } as unknown as SessionsService);
    const request = { headers: { authorization: 'Bearer arl_token' } };
    await new StrategyRunner<AuthenticatedSession>(strategy, malformed).run(request);
    expect(Object.keys(request)).toEqual(['headers']);
  });

  it('refuses a strategy that passes or redirects instead of deciding', async () => {
    for (const action of ['pass', 'redirect'] as const) {
      const strategy = {
        authenticate(this: Record<string, () => void>) {
          this[action]();
        },
      };
      await expect(new StrategyRunner(strategy, malformed).run({})).rejects.toThrow(Error);
    }
  });
});
