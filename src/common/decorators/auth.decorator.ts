import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { SESSION_TYPES, type SessionType } from 'src/common/auth/authenticated-session';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ErrorCode } from 'src/common/errors/error-code';

export const SESSION_TYPES_KEY = 'sessionTypes';

/**
 * Declares which session types a route accepts (both by default). Every route needs a session
 * unless `@Public()`; this decorator says which, and documents it in OpenAPI. The header form is
 * independent of the session type: every protected route reads `Bearer <token>` (UserAuth) and the
 * bare token (PublicAuth), so both schemes are always declared.
 */
export function Auth(...types: SessionType[]): MethodDecorator & ClassDecorator {
  const accepted = types.length > 0 ? types : [...SESSION_TYPES];
  return applyDecorators(
    SetMetadata(SESSION_TYPES_KEY, accepted),
    ApiBearerAuth('UserAuth'),
    ApiSecurity('PublicAuth'),
    ApiErrorResponses(
      ErrorCode.NoAuthToken,
      ErrorCode.InvalidToken,
      ErrorCode.ApiBanned,
      ErrorCode.Restricted,
      ErrorCode.InternalAuthError,
    ),
  );
}
