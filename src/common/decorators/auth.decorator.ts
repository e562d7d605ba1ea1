import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { SESSION_TYPES, type SessionType } from 'src/common/auth/authenticated-session';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ErrorCode } from 'src/common/errors/error-code';

export const SESSION_TYPES_KEY = 'sessionTypes';

/**
 * Declares which session types a route accepts (both by default): `login` sessions are the
 * UserAuth scheme, API tokens the PublicAuth scheme. Every route needs a session unless `@Public()`;
 * this decorator says which, and documents it in OpenAPI.
 */
export function Auth(...types: SessionType[]): MethodDecorator & ClassDecorator {
  const accepted = types.length > 0 ? types : [...SESSION_TYPES];
  return applyDecorators(
    SetMetadata(SESSION_TYPES_KEY, accepted),
    ...(accepted.includes('login') ? [ApiBearerAuth('UserAuth')] : []),
    ...(accepted.includes('api') ? [ApiSecurity('PublicAuth')] : []),
    ApiErrorResponses(
      ErrorCode.NoAuthToken,
      ErrorCode.InvalidToken,
      ErrorCode.ApiBanned,
      ErrorCode.Restricted,
      ErrorCode.InternalAuthError,
    ),
  );
}
