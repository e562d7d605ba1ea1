import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export type CheckStatus = 'up' | 'down';

export class LivenessDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

export class ReadinessChecksDto {
  @ApiProperty({ enum: ['up', 'down'] })
  database!: CheckStatus;

  /** Present only when `REDIS_URL` is configured. */
  @ApiPropertyOptional({ enum: ['up', 'down'] })
  redis?: CheckStatus;
}

export class ReadinessDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';

  checks!: ReadinessChecksDto;
}

/** The 503 body: the usual error fields plus which dependency is down. */
export class NotReadyDto {
  @ApiProperty({ enum: ['error'] })
  status!: 'error';

  /** @example "Not ready: database is down" */
  message!: string;

  @ApiProperty({ enum: ['InternalError'] })
  code!: 'InternalError';

  checks!: ReadinessChecksDto;
}
