import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type {
  AuthenticatedSession,
  AuthenticatedUser,
} from 'src/common/auth/authenticated-session';

function sessionOf(context: ExecutionContext): AuthenticatedSession {
  const request = context.switchToHttp().getRequest<{ user?: AuthenticatedSession }>();
  if (!request.user) throw new Error('No session on a route that requires one (is it @Public()?)');
  return request.user;
}

/** The session of the request (set by the authentication guard). */
export const CurrentSession = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedSession => sessionOf(context),
);

/** The user of the request. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedUser => {
    const session = sessionOf(context);
    return { id: session.userId, state: session.userState };
  },
);
