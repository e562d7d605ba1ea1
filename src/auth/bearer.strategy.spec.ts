import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import type { SessionsService } from 'src/sessions/sessions.service';

const SESSION: AuthenticatedSession = {
  id: 's1',
  userId: '1100000000000000010',
  type: 'login',
  name: null,
  state: 'active',
  userState: 'normal',
  createdAt: new Date('2026-01-01T00:00:00Z'),
  expiresAt: new Date('2027-01-01T00:00:00Z'),
  scope: null,
};

interface Outcome {
  kind: 'success' | 'fail' | 'error';
  value?: unknown;
}

/**
 * Runs passport-http-bearer's `authenticate` as the guard does: on a copy of the strategy whose
 * action functions record the outcome. `synchronous` tells whether it was reported before
 * `authenticate` returned.
 */
function run(
  sessions: Partial<SessionsService>,
  authorization: string,
): { synchronous: boolean; outcome: Promise<Outcome> } {
  const strategy = new BearerStrategy(sessions as SessionsService);
  let reported: Outcome | undefined;
  let settle: ((outcome: Outcome) => void) | undefined;
  const report = (outcome: Outcome): void => {
    if (settle) settle(outcome);
    else reported = outcome;
  };
  const attempt = Object.assign(Object.create(strategy) as BearerStrategy, {
    success: (value: unknown) => report({ kind: 'success', value }),
    fail: (value: unknown) => report({ kind: 'fail', value }),
    error: (value: unknown) => report({ kind: 'error', value }),
  });
  attempt.authenticate({ headers: { authorization } } as never);
  const synchronous = reported !== undefined;
  return {
    synchronous,
    outcome: reported ? Promise.resolve(reported) : new Promise((resolve) => (settle = resolve)),
  };
}

describe('BearerStrategy as passport-http-bearer runs it', () => {
  it('reports a cached session before authenticate returns', async () => {
    const { synchronous, outcome } = run(
      { cachedSession: () => SESSION },
      'Bearer arl_cached-token',
    );
    expect(synchronous).toBe(true);
    await expect(outcome).resolves.toEqual({ kind: 'success', value: SESSION });
  });

  it('reports a session that had to be looked up once the lookup settles', async () => {
    const { synchronous, outcome } = run(
      { cachedSession: () => undefined, authenticate: () => Promise.resolve(SESSION) },
      'Bearer arl_stored-token',
    );
    expect(synchronous).toBe(false);
    await expect(outcome).resolves.toEqual({ kind: 'success', value: SESSION });
  });

  it.each([
    ['an unknown token, from the cache', { cachedSession: () => null }, ErrorCode.InvalidToken],
    [
      'a banned user, from the cache',
      { cachedSession: () => ({ ...SESSION, userState: 'banned' as const }) },
      ErrorCode.ApiBanned,
    ],
    [
      'an unknown token, looked up',
      { cachedSession: () => undefined, authenticate: () => Promise.resolve(null) },
      ErrorCode.InvalidToken,
    ],
    [
      'a failing store',
      {
        cachedSession: () => undefined,
        authenticate: () => Promise.reject(new Error('connection refused')),
      },
      ErrorCode.InternalAuthError,
    ],
  ])('reports %s as an error with its code', async (_case, sessions, code) => {
    const { outcome } = run(sessions, 'Bearer arl_some-token');
    const reported = await outcome;
    expect(reported.kind).toBe('error');
    expect(reported.value).toBeInstanceOf(AppException);
    expect((reported.value as AppException).code).toBe(code);
  });

  it('fails a header it cannot parse without looking anything up', async () => {
    const cachedSession = jest.fn();
    const { synchronous, outcome } = run({ cachedSession }, 'Bearer two words');
    expect(synchronous).toBe(true);
    await expect(outcome).resolves.toEqual({ kind: 'fail', value: 400 });
    expect(cachedSession).not.toHaveBeenCalled();
  });
});
