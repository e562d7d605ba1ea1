import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { NULL_SCHEMA } from 'src/common/openapi/null-schema';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  MAX_STATE_CHANNELS,
  MAX_STATE_REPORTS,
  MAX_STATE_ROLES,
  MAX_STATE_THREADS,
  type GuildStateReportType,
} from 'clients/bot-reporter/src/guild-state';
import { notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import { Type } from 'src/common/validation/transform-decorators';

const TIMESTAMP = { strict: true, strictSeparator: true };
/** Permission bits as a decimal string (the platform's bits stay far below 2^128). */
export const BITS = /^(0|[1-9][0-9]{0,38})$/;
const BITS_MESSAGE = (field: string): string =>
  `${field} must be a decimal string of permission bits`;
export const NAME_MAX = 100;
/** Overwrites per channel: the platform's own cap is far lower; the body limit bounds the rest. */
export const MAX_OVERWRITES = 500;
export const HASH = /^[0-9a-f]{64}$/;
export const STREAM_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const GUILD_STATE_REPORT_TYPES = [
  'guild_create',
  'guild_update',
  'guild_delete',
  'role_upsert',
  'role_delete',
  'channel_upsert',
  'channel_delete',
  'thread_upsert',
  'thread_delete',
  'thread_list_sync',
  'bot_member_update',
] as const satisfies readonly GuildStateReportType[];

const snowflake = (field: string): PropertyDecorator =>
  Matches(SNOWFLAKE_PATTERN, { message: notASnowflake(field) });
const required = (field: string): PropertyDecorator =>
  IsDefined({ message: `${field} is required` });
const notNull =
  (field: string) =>
  (object: object): boolean =>
    (object as Record<string, unknown>)[field] !== null;

export class GuildStateRoleDto {
  @required('id')
  @snowflake('id')
  id!: string;

  @required('name')
  @IsString({ message: 'name must be a string' })
  @MaxLength(NAME_MAX, { message: `name must be at most ${NAME_MAX} characters` })
  name!: string;

  /** @example "104324673" */
  @required('permissions')
  @Matches(BITS, { message: BITS_MESSAGE('permissions') })
  permissions!: string;

  @required('position')
  @IsInt({ message: 'position must be a whole number' })
  position!: number;

  @required('managed')
  @IsBoolean({ message: 'managed must be true or false' })
  managed!: boolean;
}

export class GuildStateOverwriteDto {
  @required('id')
  @snowflake('id')
  id!: string;

  /** 0 a role, 1 a member. */
  @ApiProperty({ enum: [0, 1] })
  @required('type')
  @IsIn([0, 1], { message: 'type must be 0 (a role) or 1 (a member)' })
  type!: 0 | 1;

  @required('allow')
  @Matches(BITS, { message: BITS_MESSAGE('allow') })
  allow!: string;

  @required('deny')
  @Matches(BITS, { message: BITS_MESSAGE('deny') })
  deny!: string;
}

export class GuildStateChannelDto {
  @required('id')
  @snowflake('id')
  id!: string;

  @required('type')
  @IsInt({ message: 'type must be a whole number' })
  @Min(0, { message: 'type must be a channel type (0–255)' })
  @Max(255, { message: 'type must be a channel type (0–255)' })
  type!: number;

  /** `___hidden___` for a channel the bot cannot view. */
  @ApiProperty({ type: String, nullable: true })
  @ValidateIf(notNull('name'))
  @required('name')
  @IsString({ message: 'name must be a string or null' })
  @MaxLength(NAME_MAX, { message: `name must be at most ${NAME_MAX} characters` })
  name!: string | null;

  @required('position')
  @IsInt({ message: 'position must be a whole number' })
  position!: number;

  @ApiProperty({ type: String, nullable: true })
  @ValidateIf(notNull('parent_id'))
  @required('parent_id')
  @snowflake('parent_id')
  parent_id!: string | null;

  /** Channel flags; `1 << 17` marks a channel the bot cannot view. */
  @required('flags')
  @IsInt({ message: 'flags must be a whole number' })
  @Min(0, { message: 'flags must not be negative' })
  flags!: number;

  @ApiProperty({ type: [GuildStateOverwriteDto], maxItems: MAX_OVERWRITES })
  @required('permission_overwrites')
  @IsArray({ message: 'permission_overwrites must be an array' })
  @ArrayMaxSize(MAX_OVERWRITES, {
    message: `permission_overwrites must hold at most ${MAX_OVERWRITES} overwrites`,
  })
  @ValidateNested({ each: true })
  @Type(() => GuildStateOverwriteDto)
  permission_overwrites!: GuildStateOverwriteDto[];
}

export class GuildStateThreadDto {
  @required('id')
  @snowflake('id')
  id!: string;

  @required('type')
  @IsInt({ message: 'type must be a whole number' })
  @Min(0, { message: 'type must be a channel type (0–255)' })
  @Max(255, { message: 'type must be a channel type (0–255)' })
  type!: number;

  @ApiProperty({ type: String, nullable: true })
  @ValidateIf(notNull('name'))
  @required('name')
  @IsString({ message: 'name must be a string or null' })
  @MaxLength(NAME_MAX, { message: `name must be at most ${NAME_MAX} characters` })
  name!: string | null;

  @required('parent_id')
  @snowflake('parent_id')
  parent_id!: string;

  @required('flags')
  @IsInt({ message: 'flags must be a whole number' })
  @Min(0, { message: 'flags must not be negative' })
  flags!: number;

  @required('archived')
  @IsBoolean({ message: 'archived must be true or false' })
  archived!: boolean;
}

export class GuildStateMemberDto {
  @required('user_id')
  @snowflake('user_id')
  user_id!: string;

  @ApiProperty({ type: [String], maxItems: MAX_STATE_ROLES })
  @required('roles')
  @IsArray({ message: 'roles must be an array of role ids' })
  @ArrayMaxSize(MAX_STATE_ROLES, { message: `roles must hold at most ${MAX_STATE_ROLES} ids` })
  @Matches(SNOWFLAKE_PATTERN, { each: true, message: notASnowflake('each of roles') })
  roles!: string[];

  /** ISO 8601; in the future while the member is timed out. */
  @ApiProperty({ type: String, nullable: true })
  @ValidateIf(notNull('communication_disabled_until'))
  @required('communication_disabled_until')
  @IsISO8601(TIMESTAMP, {
    message: 'communication_disabled_until must be an ISO 8601 date and time or null',
  })
  communication_disabled_until!: string | null;
}

/** The guild's own fields (`guild_update`). */
export class GuildStateFieldsDto {
  @required('name')
  @IsString({ message: 'name must be a string' })
  @MaxLength(NAME_MAX, { message: `name must be at most ${NAME_MAX} characters` })
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  @ValidateIf(notNull('icon'))
  @required('icon')
  @IsString({ message: 'icon must be an icon hash or null' })
  @MaxLength(NAME_MAX, { message: `icon must be at most ${NAME_MAX} characters` })
  icon!: string | null;

  @required('owner_id')
  @snowflake('owner_id')
  owner_id!: string;
}

/** A whole guild as `GUILD_CREATE` brings it. */
export class GuildStateDto extends GuildStateFieldsDto {
  @required('id')
  @snowflake('id')
  id!: string;

  @ApiProperty({ type: [GuildStateRoleDto], maxItems: MAX_STATE_ROLES })
  @required('roles')
  @IsArray({ message: 'roles must be an array' })
  @ArrayMaxSize(MAX_STATE_ROLES, { message: `roles must hold at most ${MAX_STATE_ROLES} roles` })
  @ValidateNested({ each: true })
  @Type(() => GuildStateRoleDto)
  roles!: GuildStateRoleDto[];

  @ApiProperty({ type: [GuildStateChannelDto], maxItems: MAX_STATE_CHANNELS })
  @required('channels')
  @IsArray({ message: 'channels must be an array' })
  @ArrayMaxSize(MAX_STATE_CHANNELS, {
    message: `channels must hold at most ${MAX_STATE_CHANNELS} channels`,
  })
  @ValidateNested({ each: true })
  @Type(() => GuildStateChannelDto)
  channels!: GuildStateChannelDto[];

  @ApiProperty({ type: [GuildStateThreadDto], maxItems: MAX_STATE_THREADS })
  @required('threads')
  @IsArray({ message: 'threads must be an array' })
  @ArrayMaxSize(MAX_STATE_THREADS, {
    message: `threads must hold at most ${MAX_STATE_THREADS} threads`,
  })
  @ValidateNested({ each: true })
  @Type(() => GuildStateThreadDto)
  threads!: GuildStateThreadDto[];

  @required('bot_member')
  @ValidateNested()
  @Type(() => GuildStateMemberDto)
  bot_member!: GuildStateMemberDto;
}

const typeIs =
  (...types: GuildStateReportType[]) =>
  (report: GuildStateReportDto): boolean =>
    types.includes(report.type);

/** A report's object payload, carried by reports of `type` only. */
const payload = (
  type: GuildStateReportType,
  field: string,
  of: () => new () => object,
): PropertyDecorator =>
  applyDecorators(ValidateIf(typeIs(type)), required(field), ValidateNested(), Type(of));

/** A report's id payload, carried by reports of `type` only. */
const payloadId = (type: GuildStateReportType, field: string): PropertyDecorator =>
  applyDecorators(ValidateIf(typeIs(type)), required(field), snowflake(field));

/**
 * One report of a stream. Which payload field it carries depends on `type` (docs/guild-state.md):
 * `guild` (guild_create: the whole guild; guild_update: its fields), `unavailable`, `role`,
 * `role_id`, `channel`, `channel_id`, `thread`, `thread_id`, `channel_ids` and `threads`, `member`.
 */
export class GuildStateReportDto {
  /** The report's place in its stream: 1, 2, 3, … @example 1 */
  @required('seq')
  @IsInt({ message: 'seq must be a whole number' })
  @Min(1, { message: 'seq must be at least 1' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'seq must be at most 2^53 - 1' })
  seq!: number;

  @ApiProperty({ enum: GUILD_STATE_REPORT_TYPES, example: 'guild_create' })
  @required('type')
  @IsIn(GUILD_STATE_REPORT_TYPES, {
    message: `type must be one of ${GUILD_STATE_REPORT_TYPES.join(', ')}`,
  })
  type!: GuildStateReportType;

  @ApiProperty({ pattern: SNOWFLAKE_PATTERN.source, example: '1100000000000000100' })
  @required('guild_id')
  @snowflake('guild_id')
  guild_id!: string;

  /** When the bot applied the event (ISO 8601 with its offset, the bot's clock). */
  @ApiProperty({ example: '2026-11-29T10:00:00.000Z' })
  @required('at')
  @IsISO8601(TIMESTAMP, { message: 'at must be an ISO 8601 date and time' })
  at!: string;

  /** guildStateHash of the guild as the bot holds it after this report (64 hex digits). */
  @ApiProperty({ required: false, pattern: HASH.source })
  @ValidateIf((_report, value) => value !== undefined)
  @Matches(HASH, { message: 'hash must be 64 lower-case hexadecimal digits' })
  hash?: string;

  // A whole guild is also a valid set of fields: `anyOf`, not `oneOf`.
  @ApiProperty({
    required: false,
    anyOf: [{ $ref: getSchemaPath(GuildStateDto) }, { $ref: getSchemaPath(GuildStateFieldsDto) }],
  })
  @ValidateIf(typeIs('guild_create', 'guild_update'))
  @required('guild')
  @ValidateNested()
  @Type((help) =>
    (help?.object as GuildStateReportDto | undefined)?.type === 'guild_create'
      ? GuildStateDto
      : GuildStateFieldsDto,
  )
  guild?: GuildStateDto | GuildStateFieldsDto;

  @ValidateIf(typeIs('guild_delete'))
  @required('unavailable')
  @IsBoolean({ message: 'unavailable must be true (an outage) or false (the bot left)' })
  unavailable?: boolean;

  @payload('role_upsert', 'role', () => GuildStateRoleDto)
  role?: GuildStateRoleDto;

  @payloadId('role_delete', 'role_id')
  role_id?: string;

  @payload('channel_upsert', 'channel', () => GuildStateChannelDto)
  channel?: GuildStateChannelDto;

  @payloadId('channel_delete', 'channel_id')
  channel_id?: string;

  @payload('thread_upsert', 'thread', () => GuildStateThreadDto)
  thread?: GuildStateThreadDto;

  @payloadId('thread_delete', 'thread_id')
  thread_id?: string;

  /** thread_list_sync: the parents whose threads are replaced; absent, every channel's. */
  @ApiProperty({ type: [String], required: false, maxItems: MAX_STATE_CHANNELS })
  @ValidateIf(
    (report: GuildStateReportDto, value) =>
      report.type === 'thread_list_sync' && value !== undefined,
  )
  @IsArray({ message: 'channel_ids must be an array of channel ids' })
  @ArrayMaxSize(MAX_STATE_CHANNELS, {
    message: `channel_ids must hold at most ${MAX_STATE_CHANNELS} ids`,
  })
  @Matches(SNOWFLAKE_PATTERN, { each: true, message: notASnowflake('each of channel_ids') })
  channel_ids?: string[];

  @ApiProperty({ type: [GuildStateThreadDto], required: false, maxItems: MAX_STATE_THREADS })
  @ValidateIf(typeIs('thread_list_sync'))
  @required('threads')
  @IsArray({ message: 'threads must be an array' })
  @ArrayMaxSize(MAX_STATE_THREADS, {
    message: `threads must hold at most ${MAX_STATE_THREADS} threads`,
  })
  @ValidateNested({ each: true })
  @Type(() => GuildStateThreadDto)
  threads?: GuildStateThreadDto[];

  @payload('bot_member_update', 'member', () => GuildStateMemberDto)
  member?: GuildStateMemberDto;
}

/** One reporting process's stream for one shard. */
export class GuildStateStreamDto {
  /** 1–64 characters of A–Z a–z 0–9 _ - (a random UUID, say). */
  @ApiProperty({ pattern: STREAM_ID.source, example: '5f0c7a52-2a8e-4c1e-9f7e-0d6b3c1f2a90' })
  @required('id')
  @IsString({ message: 'id must be a string' })
  @Length(1, 64, { message: 'id must be 1 to 64 characters' })
  @Matches(STREAM_ID, { message: 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -' })
  id!: string;

  /** When the process started reporting (ISO 8601 with its offset). */
  @ApiProperty({ example: '2026-11-29T10:00:00.000Z' })
  @required('started_at')
  @IsISO8601(TIMESTAMP, { message: 'started_at must be an ISO 8601 date and time' })
  started_at!: string;
}

/** `POST /internal/shards/{shard_id}/guild-state`. */
export class GuildStateBatchDto {
  @required('stream')
  @ValidateNested()
  @Type(() => GuildStateStreamDto)
  stream!: GuildStateStreamDto;

  /** In `seq` order; an empty batch says the shard is alive. */
  @ApiProperty({ type: [GuildStateReportDto], maxItems: MAX_STATE_REPORTS })
  @required('reports')
  @IsArray({ message: 'reports must be an array' })
  @ArrayMaxSize(MAX_STATE_REPORTS, {
    message: `reports must hold at most ${MAX_STATE_REPORTS} reports`,
  })
  @ValidateNested({ each: true })
  @Type(() => GuildStateReportDto)
  reports!: GuildStateReportDto[];
}

export class GuildStateGapDto {
  /** @example 42 */
  expected_seq!: number;
  /** @example 45 */
  received_seq!: number;
}

type GapOrNone = GuildStateGapDto | null;

/** What the service did with a batch, and what it needs. */
@ApiExtraModels(GuildStateGapDto)
export class GuildStateReceiptDto {
  /** Reports that changed what the service holds. @example 3 */
  applied!: number;
  /** Reports already applied before (a retry). @example 0 */
  duplicates!: number;
  /** The seq the service expects next on this stream. @example 4 */
  next_seq!: number;
  /** Reports were missed: send the stream again from `expected_seq`, or start a new stream. */
  // OpenAPI 3.0 has no null type and `nullable` does not apply to a `$ref` (see SessionCreatedDto).
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(GuildStateGapDto) }, NULL_SCHEMA],
    description:
      'Reports were missed: send the stream again from `expected_seq`, or start a new stream.',
  })
  gap!: GapOrNone;
  /** Guilds whose full state (`guild_create`) the service needs. */
  @ApiProperty({ type: [String], example: [] })
  resync!: string[];
}

export const GUILD_STATE_BEHIND_REASONS = [
  'missing',
  'drifted',
  'unavailable',
  'old_stream',
  'gap',
  'stale',
] as const;
export type GuildStateBehindReason = (typeof GUILD_STATE_BEHIND_REASONS)[number];

export class GuildStateBehindDto {
  /** @example "1100000000000000100" */
  guild_id!: string;
  /**
   * Why the guild is served by the REST path: no state yet, the bot's hash differed, an outage,
   * its state came from a stream the shard no longer reports on, its shard's stream has a gap, or
   * its shard has not reported within GUILD_STATE_MAX_AGE.
   */
  @ApiProperty({ enum: GUILD_STATE_BEHIND_REASONS })
  reason!: GuildStateBehindReason;
}

/** A shard's streams: the one reporting it, and the one it took the shard over from. */
export class GuildStateShardDto {
  /** @example 0 */
  shard_id!: number;
  /** The guild-state stream reporting the shard now. */
  @ApiProperty({ type: String, nullable: true, example: '5f0c7a52-2a8e-4c1e-9f7e-0d6b3c1f2a90' })
  stream_id!: string | null;
  /** The stream has a gap: its guilds are not read until it is filled. @example false */
  gap!: boolean;
  /**
   * The stream this one took the shard over from (a restarted process, or another process
   * reporting the shard: the service logs each takeover naming both).
   */
  @ApiProperty({ type: String, nullable: true, example: null })
  replaced_stream_id!: string | null;
  /** When the takeover happened (the service's clock). */
  @ApiProperty({ type: String, nullable: true, example: null })
  replaced_at!: string | null;
  /** Guilds still read from the replaced stream's states, until the new stream sends each. @example 0 */
  restart_guilds!: number;
  /** When those stop being read: the replaced stream's last report plus `max_age`. */
  @ApiProperty({ type: String, nullable: true, example: null })
  restart_until!: string | null;
  /** The shard's newest complete membership snapshot (docs/bot-membership.md). */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-26T15:00:00.000Z' })
  snapshot_at!: string | null;
  /** The complete snapshot it replaced (a new gateway session, or another process). */
  @ApiProperty({ type: String, nullable: true, example: null })
  replaced_snapshot_at!: string | null;
}

/** `GET /internal/guild-state`: which guilds per-guild routes read from the feed. */
export class GuildStateStatusDto {
  /** Whether the membership feed is live (docs/bot-membership.md). */
  membership_live!: boolean;
  /** Seconds a shard may stay silent before its guilds' state is no longer used (GUILD_STATE_MAX_AGE). @example 600 */
  max_age!: number;
  /** Guilds the bot is in, by the membership feed. @example 2 */
  guilds!: number;
  /** Of those, guilds whose state is live. @example 2 */
  live!: number;
  /** Guilds behind, by reason. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { missing: 0, drifted: 0, unavailable: 0, old_stream: 0, gap: 0, stale: 0 },
  })
  behind!: Record<GuildStateBehindReason, number>;
  /** The first 100 guilds behind, by id. */
  @ApiProperty({ type: [GuildStateBehindDto] })
  guilds_behind!: GuildStateBehindDto[];
  /** Each shard the feeds know: its streams and snapshots, and takeovers. */
  @ApiProperty({ type: [GuildStateShardDto] })
  shards!: GuildStateShardDto[];
}
