import { Session } from '@nestjs/common';

/**
 * The session of the request, which the authentication guard sets as `request.session`. Nest's own
 * session parameter: unlike a custom decorator's value, it is not handed to the global pipe, which
 * would cost every authenticated request a chain of promises for nothing to validate. A route that
 * takes it must not be `@Public()` (a test holds every route to that).
 */
export const CurrentSession = (): ParameterDecorator => Session();
