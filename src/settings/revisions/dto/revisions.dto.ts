import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length, ValidateBy } from 'class-validator';
import { IsPageCursor, IsPageLimit } from 'src/common/paging/page';
import { unstorableText } from 'src/common/validation/json-body';
import { IsDateTimeText } from 'src/common/validation/date-time';
import { IsSnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import {
  REVISION_OPERATIONS,
  type RevisionOperation,
  type RowDiff,
} from 'src/settings/engine/settings-revision.entity';
import type { SessionType } from 'src/common/auth/authenticated-session';

/** A page holds at most this many revisions. */
export const MAX_REVISIONS_PAGE = 100;
export const DEFAULT_REVISIONS_PAGE = 50;
/** Revision numbers are stored as PostgreSQL integers. */
export const MAX_REVISION = 2 ** 31 - 1;

/**
 * A JSON object as query text: `{"role_id":"1100000000000000104"}`. Its escapes are held to the
 * rule bodies are held to: `\u0000` or a lone surrogate would reach jsonb, which refuses them.
 */
function IsJsonObjectText(): PropertyDecorator {
  const unstorable = (value: unknown): { field: string; problem: string } | null => {
    const parsed = parseJsonObject(value);
    return parsed === null ? null : unstorableText(parsed);
  };
  return ValidateBy({
    name: 'isJsonObjectText',
    validator: {
      validate: (value: unknown) => parseJsonObject(value) !== null && unstorable(value) === null,
      defaultMessage: (args) => {
        const found = unstorable(args?.value);
        return found === null
          ? '$property must be a JSON object of the entry\'s primary key, e.g. {"role_id":"1100000000000000104"}'
          : `$property.${found.field} ${found.problem}`;
      },
    },
  });
}

/** The object a JSON object text holds, or null when it holds anything else. */
export function parseJsonObject(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'string' || value.length > 1000) return null;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `GET /guilds/{guild_id}/settings/revisions`: filters (all optional, combined) and the page. */
export class ListRevisionsQueryDto {
  /** Only this setting's revisions. @example "guildroles" */
  @IsOptional()
  @IsString({ message: 'setting must be a string' })
  @Length(1, 64, { message: 'setting must be 1 to 64 characters' })
  setting?: string;

  /** Only this entry's revisions: its primary key as a JSON object (needs `setting`). */
  @ApiProperty({ required: false, type: String, example: '{"role_id":"1100000000000000104"}' })
  @IsOptional()
  @IsJsonObjectText()
  key?: string;

  /** Only changes made by this user. */
  @ApiProperty({
    required: false,
    pattern: SNOWFLAKE_PATTERN.source,
    example: '1100000000000000011',
  })
  @IsOptional()
  @IsSnowflake()
  author?: string;

  /** Only changes made with this login session or API token. */
  @IsOptional()
  @IsUUID('all', { message: 'session_id must be a UUID' })
  session_id?: string;

  @ApiProperty({ required: false, enum: REVISION_OPERATIONS })
  @IsOptional()
  @IsIn(REVISION_OPERATIONS, {
    message: `operation must be one of ${REVISION_OPERATIONS.join(', ')}`,
  })
  operation?: RevisionOperation;

  /** Changes made at or after this instant (ISO 8601). @example "2026-11-01T00:00:00Z" */
  @ApiProperty({ required: false, type: String, format: 'date-time' })
  @IsOptional()
  @IsDateTimeText()
  since?: string;

  /** Changes made before this instant (ISO 8601). */
  @ApiProperty({ required: false, type: String, format: 'date-time' })
  @IsOptional()
  @IsDateTimeText()
  until?: string;

  /** The previous page's `next_cursor`: continues with older revisions. @example "42" */
  @IsPageCursor(MAX_REVISION)
  cursor?: string;

  @IsPageLimit(MAX_REVISIONS_PAGE, DEFAULT_REVISIONS_PAGE)
  limit?: string;
}

const ENTRY_SCHEMA = { type: 'object', additionalProperties: true, nullable: true } as const;

/** One committed change to one entry of a setting. */
export class RevisionDto {
  /** The change's number in the guild: it only grows. @example 42 */
  @ApiProperty({ type: 'integer', minimum: 1 })
  revision!: number;

  /** @example "guildroles" */
  setting!: string;

  /**
   * The entry's primary key (null on records from before revisions named their entry).
   * @example {"role_id":"1100000000000000104"}
   */
  @ApiProperty(ENTRY_SCHEMA)
  key!: Record<string, unknown> | null;

  @ApiProperty({ enum: REVISION_OPERATIONS })
  operation!: RevisionOperation;

  /** The entry before the change (null for Create). */
  @ApiProperty(ENTRY_SCHEMA)
  before!: Record<string, unknown> | null;

  /** The entry after the change (null for Delete). */
  @ApiProperty(ENTRY_SCHEMA)
  after!: Record<string, unknown> | null;

  /**
   * The columns whose value changed, `{column: {before, after}}` (null on records from before
   * revisions).
   * @example {"perms":{"before":["rpc.view"],"after":["rpc.view","rpc.kick"]},"version":{"before":1,"after":2}}
   */
  @ApiProperty(ENTRY_SCHEMA)
  diff!: RowDiff | null;

  /** Who made the change. @example "1100000000000000011" */
  user_id!: string;

  /** The login session or API token used (null: an operator, from the CLI). */
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  session_id!: string | null;

  @ApiProperty({ enum: ['login', 'api', null], nullable: true })
  session_type!: SessionType | null;

  /** The revision this change undid (a rollback), else null. */
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true })
  reverts!: number | null;

  /** ISO 8601. */
  created_at!: string;
}

/** A page of revisions, newest first. */
export class RevisionPageDto {
  revisions!: RevisionDto[];

  /** Pass as `cursor` for the next (older) page; null on the last page. @example "42" */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}

/** What a rollback did: the revisions it recorded, newest last (none when nothing had to change). */
export class RollbackResultDto {
  revisions!: RevisionDto[];
}
