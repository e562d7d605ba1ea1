import type { SchemaObject } from '@nestjs/swagger';

/**
 * The value null, as OpenAPI 3.0 can say it: 3.0 has no null type, and `nullable` only widens a
 * `type` written beside it. Used as one alternative of a `oneOf` whose other is a `$ref`.
 */
export const NULL_SCHEMA: SchemaObject = { type: 'object', nullable: true, enum: [null] };
