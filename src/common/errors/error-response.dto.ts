import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorCode } from 'src/common/errors/error-code';

export class ErrorDetailDto {
  /** The offending field, as a dotted path into the request (e.g. `fields.name`). */
  field!: string;

  /** What is wrong with the field and what would be right. */
  message!: string;
}

/** The body of every error response. */
export class ErrorResponseDto {
  /** A human-readable explanation, written for the API's user. */
  message!: string;

  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode' })
  code!: ErrorCode;

  /** One entry per invalid field, on validation failures. */
  @ApiPropertyOptional({ type: [ErrorDetailDto] })
  details?: ErrorDetailDto[];

  /** On 500 responses: the id under which the failure was logged. */
  error_id?: string;
}
