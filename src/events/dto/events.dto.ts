import { ApiProperty } from '@nestjs/swagger';
import { REVISION_OPERATIONS, type RevisionOperation } from 'src/settings/engine/settings.events';
import { SHARD_STATUSES, type ShardStatus } from 'src/bot-reports/shard-stats/shard-stats';

/** `event: ready` / `event: reset`: where the stream stands (its `id` is this revision). */
export class GuildStreamPositionDto {
  /** @example "1100000000000000001" */
  guild_id!: string;

  /** The guild's newest revision (0 before its first change). @example 42 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  revision!: number;
}

/** `event: settings`: one committed change to an entry (its `id` is the revision number). */
export class SettingsChangeEventDto {
  /** @example 43 */
  @ApiProperty({ type: 'integer', minimum: 1 })
  revision!: number;

  /** @example "guildroles" */
  setting!: string;

  /**
   * The entry's primary key.
   * @example {"role_id":"1100000000000000104"}
   */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  key!: Record<string, unknown> | null;

  @ApiProperty({ enum: REVISION_OPERATIONS })
  operation!: RevisionOperation;

  /** Who made the change. @example "1100000000000000011" */
  user_id!: string;

  @ApiProperty({ enum: ['login', 'api', null], nullable: true })
  session_type!: 'login' | 'api' | null;

  /** The columns whose value changed (values: read the entry, or the revision). @example ["perms","version"] */
  changed!: string[];

  /** The revision this change undid (a rollback), else null. */
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true })
  reverts!: number | null;

  /** @example "2026-11-24T08:00:00.000Z" */
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
}

/** `event: shard`: a shard's status changed (`previous` null: its first report). */
export class ShardStatusEventDto {
  /** @example 0 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  shard_id!: number;

  @ApiProperty({ enum: SHARD_STATUSES, example: 'Reconnecting' })
  status!: ShardStatus;

  @ApiProperty({ enum: [...SHARD_STATUSES, null], nullable: true, example: 'Ready' })
  previous!: ShardStatus | null;
}

/** `event: totals`: the totals of `GET /bot-stats` changed. */
export class BotTotalsEventDto {
  /** @example 1520 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total_guilds!: number;

  /** @example 480000 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total_users!: number;

  /** How many shards have reported. @example 1 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  shards!: number;
}
