import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, DECORATORS, getSchemaPath } from '@nestjs/swagger';
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

/** The error codes already documented on a route or controller, so that a second list adds to them. */
const DOCUMENTED_CODES = Symbol('documentedErrorCodes');

/**
 * One response per status with every code documented on the route so far: a route may be given
 * codes twice (by `@Auth()` and by its own list), and the document generator would otherwise join
 * two entries of one status into one with both descriptions and the second's examples only.
 */
function errorResponses(codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const decorator = (
    target: object,
    key?: string | symbol,
    descriptor?: PropertyDescriptor,
  ): void => {
    const holder = (descriptor?.value as object | undefined) ?? target;
    const previous =
      (Reflect.getMetadata(DOCUMENTED_CODES, holder) as ErrorCode[] | undefined) ?? [];
    const all = [...new Set([...previous, ...codes])];
    Reflect.defineMetadata(DOCUMENTED_CODES, all, holder);
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, holder) as
      Record<string, unknown> | undefined;
    if (responses && previous.length > 0) {
      const kept = { ...responses };
      for (const code of previous) delete kept[String(ERROR_STATUS[code])];
      Reflect.defineMetadata(DECORATORS.API_RESPONSE, kept, holder);
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of all) {
      const status = ERROR_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const decorate = applyDecorators(
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
    if (descriptor) decorate(target, key, descriptor);
    else decorate(target as never);
  };
  return decorator;
}
