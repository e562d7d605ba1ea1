import { BearerStrategy } from 'src/auth/bearer.strategy';
import { StrategyRunner } from 'src/auth/strategy-runner';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { SessionsService } from 'src/sessions/sessions.service';
import { LOGIN_SESSION } from 'test/fixtures/sessions';

const SESSION = LOGIN_SESSION;

function strategyOver(authenticate: SessionsService['authenticate']): BearerStrategy {
  return new BearerStrategy({ authenticate } as SessionsService);
}

describe('BearerStrategy.validate', () => {
  it('resolves a live session', async () => {
    const authenticate = jest.fn(() => Promise.resolve(SESSION));
    await expect(strategyOver(authenticate).validate('arl_token')).resolves.toBe(SESSION);
    expect(authenticate).toHaveBeenCalledWith('arl_token');
  });

  it.each<[string, () => Promise<AuthenticatedSession | null>, ErrorCode, string]>([
    [
      'an unknown, expired or revoked token',
      () => Promise.resolve(null),
      ErrorCode.InvalidToken,
      'The token is invalid, expired or revoked',
    ],
    [
      'a banned user',
      () => Promise.resolve({ ...SESSION, userState: 'banned' }),
      ErrorCode.ApiBanned,
      'This account is banned from this service',
    ],
    [
      'a banned token',
      () => Promise.resolve({ ...SESSION, state: 'banned' }),
      ErrorCode.ApiBanned,
      'This token is banned',
    ],
    [
      'a failing session store',
      () => Promise.reject(new Error('connection refused')),
      ErrorCode.InternalAuthError,
      'The authentication system is unavailable; try again later',
    ],
  ])('refuses %s', async (_case, authenticate, code, message) => {
    const refusal = await strategyOver(authenticate)
      .validate('arl_token')
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppException);
    expect(refusal).toMatchObject({ code, message });
  });
});

describe("BearerStrategy under the guard's runner", () => {
  /**
   * Runs the strategy as the guard does (StrategyRunner, which reports what passport's own
   * `authenticate` would: strategy-runner.spec.ts), as an error or a session.
   */
  function authenticate(
    strategy: BearerStrategy,
    request: object,
  ): Promise<{ error: unknown; session: unknown }> {
    return new StrategyRunner(strategy, () => false).run(request).then(
      (session) => ({ error: null, session }),
      (error: unknown) =>
        error === false ? { error: null, session: false } : { error, session: null },
    );
  }

  it('hands validate the token of `Bearer <token>`', async () => {
    const lookUp = jest.fn(() => Promise.resolve(SESSION));
    const outcome = await authenticate(strategyOver(lookUp), {
      headers: { authorization: 'Bearer arl_token' },
    });
    expect(outcome).toEqual({ error: null, session: SESSION });
    expect(lookUp).toHaveBeenCalledWith('arl_token');
  });

  it('reports what validate refused as an error', async () => {
    const { error } = await authenticate(
      strategyOver(() => Promise.resolve(null)),
      { headers: { authorization: 'Bearer arl_token' } },
    );
    expect(error).toMatchObject({ code: ErrorCode.InvalidToken });
  });

  it('fails a second token in the query without looking anything up', async () => {
    const lookUp = jest.fn(() => Promise.resolve(SESSION));
    const outcome = await authenticate(strategyOver(lookUp), {
      headers: { authorization: 'Bearer arl_token' },
      query: { access_token: 'arl_other' },
    });
    expect(outcome).toEqual({ error: null, session: false });
    expect(lookUp).not.toHaveBeenCalled();
  });
});
