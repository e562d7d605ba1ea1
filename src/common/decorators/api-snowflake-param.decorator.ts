import { ApiParam } from '@nestjs/swagger';
import { SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

/**
 * Documents a snowflake path parameter with the pattern `ParseSnowflakePipe` enforces; `example`
 * is what Swagger UI fills in (the demo's ids, so that a demo works as it opens).
 */
export function ApiSnowflakeParam(name: string, example: string): MethodDecorator & ClassDecorator {
  return ApiParam({
    name,
    description: 'A platform id (snowflake): a decimal of at most 20 digits, at most 2^64 − 1',
    // The example in the schema: the generator drops one beside a schema.
    schema: { type: 'string', pattern: SNOWFLAKE_PATTERN.source, example },
  });
}
