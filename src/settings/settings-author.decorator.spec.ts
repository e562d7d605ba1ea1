import type { ExecutionContext } from '@nestjs/common';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { readAuthor } from 'src/settings/settings-author.decorator';

const contextOf = (session: Partial<AuthenticatedSession> | null): ExecutionContext =>
  ({ switchToHttp: () => ({ getRequest: () => ({ session }) }) }) as unknown as ExecutionContext;

describe('@Author()', () => {
  it.each([
    [
      'a login session',
      { userId: '1', id: 's-1', type: 'login', scope: null },
      { userId: '1', sessionId: 's-1', sessionType: 'login', scope: undefined },
    ],
    [
      'a scoped API token',
      { userId: '2', id: 's-2', type: 'api', scope: { permissions: ['a.view'], guilds: null } },
      { userId: '2', sessionId: 's-2', sessionType: 'api', scope: ['a.view'] },
    ],
  ])('reads the author of %s', (_case, session, author) => {
    expect(readAuthor(undefined, contextOf(session as Partial<AuthenticatedSession>))).toEqual(
      author,
    );
  });

  it('fails loudly on a route without authentication', () => {
    expect(() => readAuthor(undefined, contextOf(null))).toThrow(
      '@Author() on a route without authentication',
    );
  });
});
