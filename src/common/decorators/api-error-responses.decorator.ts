import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';
import { ErrorResponseDto } from 'src/common/errors/error-response.dto';

/**
 * Documents the error responses of a route with the error schema, grouped by status and listing the
 * codes each status can carry. `InternalError` (500) is documented on every route.
 */
export function ApiErrorResponses(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ErrorCode.InternalError])) {
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
