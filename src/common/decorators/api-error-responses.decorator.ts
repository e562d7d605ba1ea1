import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';
import { ErrorResponseDto } from 'src/common/errors/error-response.dto';

/**
 * Documents the error responses of a route with the error schema, grouped by status and listing the
 * codes each status can carry. `RateLimited` (429) and `InternalError` (500) are documented on
 * every route.
 */
export function ApiErrorResponses(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  return errorResponses([...codes, ErrorCode.RateLimited, ErrorCode.InternalError]);
}

/** As `ApiErrorResponses`, for routes exempt from rate limiting (`@NoRateLimit()`). */
export function ApiErrorResponsesUnlimited(
  ...codes: ErrorCode[]
): MethodDecorator & ClassDecorator {
  return errorResponses([...codes, ErrorCode.InternalError]);
}

function errorResponses(codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ApiExtraModels(ErrorResponseDto),
    ...[...byStatus].map(([status, statusCodes]) =>
      ApiResponse({
        status,
        description: `Error: ${statusCodes.join(' or ')}`,
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponseDto) },
            examples: Object.fromEntries(
              statusCodes.map((code) => [code, { value: { message: '…', code } }]),
            ),
          },
        },
      }),
    ),
  );
}
