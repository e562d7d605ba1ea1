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
  /**
   * `degraded`: the database answers but Redis does not. The service keeps serving (rate limits and
   * caches fall back to this process), so it stays in rotation.
   */
  @ApiProperty({ enum: ['ok', 'degraded'] })
  status!: 'ok' | 'degraded';

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
