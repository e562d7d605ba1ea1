import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { SHARD_STATUSES, type ShardStatus } from 'src/bot-reports/shard-stats/shard-stats';

const MAX_LATENCY_MS = 2_147_483_647;

/** `PUT /internal/shards/{shard_id}`: what a shard reports about itself. */
export class ShardReportDto {
  @ApiProperty({ enum: SHARD_STATUSES.filter((s) => s !== 'Unknown'), example: 'Ready' })
  @IsIn(SHARD_STATUSES.filter((s) => s !== 'Unknown'), {
    message: `status must be one of ${SHARD_STATUSES.filter((s) => s !== 'Unknown').join(', ')}`,
  })
  status!: Exclude<ShardStatus, 'Unknown'>;

  /** Heartbeat round trip in milliseconds; null before the first heartbeat was acknowledged. */
  @ApiProperty({ type: Number, nullable: true, example: 42 })
  @ValidateIf((report: ShardReportDto) => report.real_latency !== null)
  @IsInt({ message: 'real_latency must be a whole number of milliseconds, or null' })
  @Min(0, { message: 'real_latency must not be negative' })
  @Max(MAX_LATENCY_MS, { message: `real_latency must be at most ${MAX_LATENCY_MS}` })
  real_latency!: number | null;

  /** @example 1520 */
  @IsInt({ message: 'guilds must be a whole number' })
  @Min(0, { message: 'guilds must not be negative' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'guilds is too large' })
  guilds!: number;

  /** Members across the shard's guilds. @example 480000 */
  @IsInt({ message: 'users must be a whole number' })
  @Min(0, { message: 'users must not be negative' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'users is too large' })
  users!: number;

  /** Seconds since the current connection was made. @example 3600 */
  @IsInt({ message: 'uptime must be a whole number of seconds' })
  @Min(0, { message: 'uptime must not be negative' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'uptime is too large' })
  uptime!: number;

  /** Seconds since the shard first started; at least `uptime`. @example 86400 */
  @IsInt({ message: 'total_uptime must be a whole number of seconds' })
  @Min(0, { message: 'total_uptime must not be negative' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'total_uptime is too large' })
  total_uptime!: number;
}

/** The stored report, as `PUT /internal/shards/{shard_id}` answers it. */
export class StoredShardDto {
  /** @example 0 */
  shard_id!: number;

  @ApiProperty({ enum: SHARD_STATUSES, example: 'Ready' })
  status!: ShardStatus;

  @ApiProperty({ type: Number, nullable: true, example: 42 })
  real_latency!: number | null;

  guilds!: number;
  users!: number;
  uptime!: number;
  total_uptime!: number;

  /** ISO 8601. */
  reported_at!: string;
}
