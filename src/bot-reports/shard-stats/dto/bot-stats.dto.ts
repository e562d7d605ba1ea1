import { ApiProperty } from '@nestjs/swagger';
import { SHARD_STATUSES, type ShardStatus } from 'src/bot-reports/shard-stats/shard-stats';

export class ShardConnectionDto {
  /** `Unknown` when the shard has not reported for over 2 minutes. */
  @ApiProperty({ enum: SHARD_STATUSES, example: 'Ready' })
  status!: ShardStatus;

  /** Heartbeat round trip in milliseconds; -1 before the first heartbeat. @example 42 */
  real_latency!: number;

  /** @example 1520 */
  guilds!: number;

  /** Seconds since the current connection was made. @example 3600 */
  uptime!: number;

  /** Seconds since the shard first started. @example 86400 */
  total_uptime!: number;
}

/** `GET /bot-stats`. */
export class BotStatsDto {
  /** The shards by id (as strings). */
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ShardConnectionDto' },
    example: {
      '0': { status: 'Ready', real_latency: 42, guilds: 1520, uptime: 3600, total_uptime: 86400 },
    },
  })
  shard_conns!: Record<string, ShardConnectionDto>;

  /** The sum of the shards' guilds. @example 1520 */
  total_guilds!: number;

  /** The sum of the shards' members (a member of two guilds counts twice). @example 480000 */
  total_users!: number;
}
