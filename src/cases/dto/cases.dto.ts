import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { CASE_ACTIONS, type CaseAction, MAX_REASON_LENGTH } from 'src/cases/moderation-case.entity';
import { IsPageCursor, IsPageLimit } from 'src/common/paging/page';
import { IsSnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

/** A page holds at most this many cases. */
export const MAX_CASES_PAGE = 100;
export const DEFAULT_CASES_PAGE = 25;
/** Case numbers are stored as PostgreSQL integers. */
export const MAX_CASE_NUMBER = 2 ** 31 - 1;

/** `POST /guilds/{guild_id}/cases`: what the bot reports. */
export class RecordCaseDto {
  /** The member acted on. @example "1100000000000000012" */
  @ApiProperty({ pattern: SNOWFLAKE_PATTERN.source })
  @IsSnowflake()
  user_id!: string;

  /** The moderator who acted (the bot's own id for an automatic action). @example "1100000000000000011" */
  @ApiProperty({ pattern: SNOWFLAKE_PATTERN.source })
  @IsSnowflake()
  moderator_id!: string;

  @ApiProperty({ enum: CASE_ACTIONS, example: 'warn' })
  @IsIn(CASE_ACTIONS, { message: `action must be one of ${CASE_ACTIONS.join(', ')}` })
  action!: CaseAction;

  /** Why, as the moderator gave it. @example "Spamming invites in #general" */
  @ApiProperty({ required: false, nullable: true, maxLength: MAX_REASON_LENGTH })
  @IsOptional()
  @IsString({ message: 'reason must be a string' })
  @MaxLength(MAX_REASON_LENGTH, {
    message: `reason must be at most ${MAX_REASON_LENGTH} characters`,
  })
  reason?: string | null;
}

/** `GET /guilds/{guild_id}/cases`: the filter and the page. */
export class ListCasesQueryDto {
  /** Only the cases of this member. */
  @ApiProperty({
    required: false,
    pattern: SNOWFLAKE_PATTERN.source,
    example: '1100000000000000012',
  })
  @IsOptional()
  @IsSnowflake()
  user_id?: string;

  /** The previous page's `next_cursor`: continues with older cases. @example "12" */
  @IsPageCursor(MAX_CASE_NUMBER)
  cursor?: string;

  @IsPageLimit(MAX_CASES_PAGE, DEFAULT_CASES_PAGE)
  limit?: string;
}

/** One moderation case. */
export class CaseDto {
  /** The case's number in its guild, from 1. @example 12 */
  @ApiProperty({ type: 'integer', minimum: 1 })
  number!: number;

  /** @example "1100000000000000100" */
  guild_id!: string;

  /** @example "1100000000000000012" */
  user_id!: string;

  /** @example "1100000000000000011" */
  moderator_id!: string;

  @ApiProperty({ enum: CASE_ACTIONS })
  action!: CaseAction;

  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;

  /** When it was recorded (ISO 8601). */
  created_at!: string;
}

/** A page of a guild's cases, newest first. */
export class CasePageDto {
  cases!: CaseDto[];

  /** Pass as `cursor` for the next (older) page; null on the last page. @example "12" */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}
