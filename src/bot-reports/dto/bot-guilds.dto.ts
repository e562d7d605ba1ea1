import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'src/common/validation/transform-decorators';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import { MAX_SHARD_ID } from 'src/bot-reports/parse-shard-id.pipe';

/** Guild ids per snapshot part: with 20-digit ids, a part stays under the 100 KiB body limit. */
export const MAX_SNAPSHOT_PART = 4_000;
/** Events per batch. */
export const MAX_EVENT_BATCH = 1_000;
/** Guilds one snapshot may list (far above what one shard serves). */
export const MAX_SNAPSHOT_TOTAL = 1_000_000;

const TIMESTAMP = { strict: true, strictSeparator: true };

/** `PUT /internal/shards/{shard_id}/guilds`: a shard's guilds, whole or in parts. */
export class GuildSnapshotDto {
  /** How many shards the bot runs. @example 1 */
  @IsDefined({ message: 'shard_count is required' })
  @IsInt({ message: 'shard_count must be a whole number' })
  @Min(1, { message: 'shard_count must be at least 1' })
  @Max(MAX_SHARD_ID + 1, { message: `shard_count must be at most ${MAX_SHARD_ID + 1}` })
  shard_count!: number;

  /**
   * When the shard's READY arrived (ISO 8601, the bot's clock): names the snapshot, so every part
   * of one snapshot carries the same value. @example "2026-11-26T15:00:00.000Z"
   */
  @IsDefined({ message: 'snapshot_at is required' })
  @IsISO8601(TIMESTAMP, { message: 'snapshot_at must be an ISO 8601 date and time' })
  snapshot_at!: string;

  /** Distinct guild ids in the whole snapshot (all parts). @example 2 */
  @IsDefined({ message: 'total is required' })
  @IsInt({ message: 'total must be a whole number' })
  @Min(0, { message: 'total must not be negative' })
  @Max(MAX_SNAPSHOT_TOTAL, { message: `total must be at most ${MAX_SNAPSHOT_TOTAL}` })
  total!: number;

  /** This part's guild ids (repeats are counted once). */
  @ApiProperty({
    type: [String],
    maxItems: MAX_SNAPSHOT_PART,
    items: { type: 'string', pattern: SNOWFLAKE_PATTERN.source },
    example: ['1100000000000000100', '1100000000000000300'],
  })
  @IsDefined({ message: 'guild_ids is required' })
  @IsArray({ message: 'guild_ids must be an array of guild ids' })
  @ArrayMaxSize(MAX_SNAPSHOT_PART, {
    message: `guild_ids must hold at most ${MAX_SNAPSHOT_PART} ids; send a larger snapshot in parts`,
  })
  @Matches(SNOWFLAKE_PATTERN, { each: true, message: notASnowflake('each of guild_ids') })
  guild_ids!: string[];
}

/** What the service holds of a snapshot after one part. */
export class SnapshotReceiptDto {
  /** @example 0 */
  shard_id!: number;
  /** @example "2026-11-26T15:00:00.000Z" */
  snapshot_at!: string;
  /** Ids of this snapshot received so far. @example 2 */
  received!: number;
  /** @example 2 */
  total!: number;
  /** Whether every id has arrived: the shard's set is then replaced. */
  complete!: boolean;
}

export const GUILD_EVENT_TYPES = ['join', 'leave'] as const;

/** A guild the bot joined (`GUILD_CREATE` of a new guild) or was removed from. */
export class GuildEventDto {
  @ApiProperty({ enum: GUILD_EVENT_TYPES, example: 'join' })
  @IsDefined({ message: 'type is required' })
  @IsIn(GUILD_EVENT_TYPES, { message: 'type must be join or leave' })
  type!: (typeof GUILD_EVENT_TYPES)[number];

  @ApiProperty({ pattern: SNOWFLAKE_PATTERN.source, example: '1100000000000000200' })
  @IsDefined({ message: 'guild_id is required' })
  @Matches(SNOWFLAKE_PATTERN, { message: notASnowflake('guild_id') })
  guild_id!: string;

  /** When the bot saw it (ISO 8601, the bot's clock). @example "2026-11-26T15:00:05.000Z" */
  @IsDefined({ message: 'at is required' })
  @IsISO8601(TIMESTAMP, { message: 'at must be an ISO 8601 date and time' })
  at!: string;
}

/** `POST /internal/shards/{shard_id}/guild-events`; an empty batch says the shard is alive. */
export class GuildEventsDto {
  @ApiProperty({ type: [GuildEventDto], maxItems: MAX_EVENT_BATCH })
  @IsDefined({ message: 'events is required' })
  @IsArray({ message: 'events must be an array' })
  @ArrayMaxSize(MAX_EVENT_BATCH, { message: `events must hold at most ${MAX_EVENT_BATCH} events` })
  @ValidateNested({ each: true })
  @Type(() => GuildEventDto)
  events!: GuildEventDto[];
}

export class GuildEventsReceiptDto {
  /** Events that changed what the service holds. @example 1 */
  applied!: number;
  /** Events older than what the service holds (a replay, or a late batch). @example 0 */
  ignored!: number;
}

export class FeedShardDto {
  /** @example 0 */
  shard_id!: number;
  /** Guilds the service holds for the shard. @example 2 */
  guilds!: number;
  /** The shard's newest complete snapshot. */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-26T15:00:00.000Z' })
  snapshot_at!: string | null;
  /** When the service last heard from the shard. */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-26T15:00:30.000Z' })
  reported_at!: string | null;
  /** Complete snapshot and a report within `stale_after`. */
  live!: boolean;
}

/** `GET /internal/bot-guilds`: the membership feed as this instance holds it. */
export class FeedStatusDto {
  /** Whether per-guild routes and `bot_in_guilds` answer from the feed alone. */
  live!: boolean;
  @ApiProperty({ type: Number, nullable: true, example: 1 })
  shard_count!: number | null;
  /** Seconds a shard may stay silent (BOT_FEED_STALE_AFTER). @example 120 */
  stale_after!: number;
  /** Guilds the bot is in, by the feed. @example 2 */
  guilds!: number;
  @ApiProperty({ type: [FeedShardDto] })
  shards!: FeedShardDto[];
}
