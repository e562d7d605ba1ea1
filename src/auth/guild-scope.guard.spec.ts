import type { ExecutionContext } from '@nestjs/common';
import { GuildScopeGuard } from 'src/auth/guild-scope.guard';
import type { AuthenticatedSession, TokenScope } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

const GUILD = '1100000000000000100';
const OTHER_GUILD = '1100000000000000200';

function session(scope: TokenScope | null): AuthenticatedSession {
  return {
    id: 's1',
    userId: '1100000000000000010',
    type: 'api',
    name: 'bot',
    state: 'active',
    userState: 'normal',
    createdAt: new Date('2026-01-01T00:00:00Z'),
    expiresAt: new Date('2027-01-01T00:00:00Z'),
    scope,
  };
}

function contextOf(request: {
  session: AuthenticatedSession | null;
  params?: unknown;
}): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

describe('GuildScopeGuard', () => {
  const guard = new GuildScopeGuard();

  it.each<[string, AuthenticatedSession | null, unknown]>([
    ['a public route (no session)', null, { guild_id: OTHER_GUILD }],
    ['a token without a scope', session(null), { guild_id: OTHER_GUILD }],
    [
      'a token scoped to permissions only',
      session({ guilds: null, permissions: ['guild.view'] }),
      { guild_id: OTHER_GUILD },
    ],
    [
      'a route of a guild in scope',
      session({ guilds: [GUILD], permissions: null }),
      { guild_id: GUILD },
    ],
    ['a route about no guild', session({ guilds: [GUILD], permissions: null }), {}],
    ['a route without parameters', session({ guilds: [GUILD], permissions: null }), undefined],
  ])('lets through %s', (_case, caller, params) => {
    expect(guard.canActivate(contextOf({ session: caller, params }))).toBe(true);
  });

  it('refuses a route of a guild outside the scope with 403 Restricted, naming the guilds', () => {
    const caller = session({ guilds: [GUILD, '1100000000000000300'], permissions: null });
    let refusal: unknown;
    try {
      guard.canActivate(contextOf({ session: caller, params: { guild_id: OTHER_GUILD } }));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppException);
    expect(refusal).toMatchObject({
      code: ErrorCode.Restricted,
      message: `This API token is limited to the guilds ${GUILD}, 1100000000000000300`,
    });
  });
});
