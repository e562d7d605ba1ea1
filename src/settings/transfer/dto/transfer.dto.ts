import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'src/common/validation/transform-decorators';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { isSnowflake, notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';
import { RevisionDto } from 'src/settings/revisions/dto/revisions.dto';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { RowDiff } from 'src/settings/engine/settings-revision.entity';
import { EXPORT_FORMAT, EXPORT_VERSION } from 'src/settings/transfer/transfer-plan';

const ROWS_SCHEMA = {
  type: 'object',
  additionalProperties: { type: 'array', items: { type: 'object', additionalProperties: true } },
} as const;
const KEY_SCHEMA = { type: 'object', additionalProperties: true } as const;

/** A guild's configuration as `GET …/settings/export` writes it and `POST …/settings/import` reads it. */
export class SettingsExportDto {
  @ApiProperty({ enum: [EXPORT_FORMAT] })
  @IsIn([EXPORT_FORMAT], { message: `document.format must be ${EXPORT_FORMAT}` })
  format!: typeof EXPORT_FORMAT;

  /** The document's format version. */
  @ApiProperty({ enum: [EXPORT_VERSION] })
  @IsIn([EXPORT_VERSION], { message: `document.version must be ${EXPORT_VERSION}` })
  version!: typeof EXPORT_VERSION;

  /** The guild it was exported from. @example "1100000000000000100" */
  @ApiProperty({ pattern: SNOWFLAKE_PATTERN.source })
  @Matches(SNOWFLAKE_PATTERN, { message: notASnowflake('document.guild_id') })
  guild_id!: string;

  /** When (ISO 8601). */
  @IsString({ message: 'document.exported_at must be a string' })
  exported_at!: string;

  /** The source guild's last revision when it was exported (0: none). @example 42 */
  @ApiProperty({ type: 'integer', minimum: 0 })
  @IsInt({ message: 'document.revision must be a whole number' })
  @Min(0, { message: 'document.revision must be a whole number' })
  revision!: number;

  /**
   * Each setting's entries: its key and the values a client sets (no audit columns, no version).
   * @example {"guildroles":[{"role_id":"1100000000000000104","perms":["rpc.view"],"index":5}]}
   */
  @ApiProperty(ROWS_SCHEMA)
  @IsSettingsEntries()
  settings!: Record<string, SettingRow[]>;
}

/** An object of setting ids to arrays of entries (objects). */
function IsSettingsEntries(): PropertyDecorator {
  const isEntry = (value: unknown): boolean =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  return ValidateBy({
    name: 'isSettingsEntries',
    validator: {
      validate: (value: unknown) =>
        isEntry(value) &&
        Object.values(value as object).every((rows) => Array.isArray(rows) && rows.every(isEntry)),
      defaultMessage: () =>
        'document.settings must be an object of setting ids to arrays of entries (objects)',
    },
  });
}

/** An object of snowflakes to snowflakes. */
function IsSnowflakeMap(): PropertyDecorator {
  return ValidateBy({
    name: 'isSnowflakeMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.entries(value).every(([from, to]) => isSnowflake(from) && isSnowflake(to)),
      defaultMessage: () => '$property must map ids (snowflakes) to ids, e.g. {"111": "222"}',
    },
  });
}

const ID_MAP_SCHEMA = {
  type: Object,
  additionalProperties: { type: 'string', pattern: SNOWFLAKE_PATTERN.source },
};

/** Ids of the source guild → ids of this guild; the others are kept as they are. */
export class IdMappingDto {
  /** @example {"1100000000000000104":"1200000000000000104"} */
  @ApiProperty({ ...ID_MAP_SCHEMA, required: false })
  @IsOptional()
  @IsSnowflakeMap()
  roles?: Record<string, string>;

  @ApiProperty({ ...ID_MAP_SCHEMA, required: false })
  @IsOptional()
  @IsSnowflakeMap()
  channels?: Record<string, string>;

  @ApiProperty({ ...ID_MAP_SCHEMA, required: false })
  @IsOptional()
  @IsSnowflakeMap()
  users?: Record<string, string>;
}

/** `POST /guilds/{guild_id}/settings/import`. */
export class ImportSettingsDto {
  @ValidateNested()
  @Type(() => SettingsExportDto)
  @IsObject({ message: 'document must be an export document' })
  document!: SettingsExportDto;

  /** Only report what the import would do (the default); `false` applies it. */
  @ApiProperty({ required: false, default: true })
  @IsOptional()
  @IsBoolean({ message: 'dry_run must be true or false' })
  dry_run?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => IdMappingDto)
  @IsObject({ message: 'mapping must be an object' })
  mapping?: IdMappingDto;
}

/** An entry the import changes: its key, and the columns that change. */
export class ImportedUpdateDto {
  @ApiProperty(KEY_SCHEMA)
  key!: Record<string, unknown>;

  /** `{column: {before, after}}`. */
  @ApiProperty(KEY_SCHEMA)
  changes!: RowDiff;
}

/** An entry the import cannot make, and why. */
export class ImportRefusalDto {
  @ApiProperty(KEY_SCHEMA)
  key!: Record<string, unknown>;

  @ApiProperty({ enum: ['Create', 'Update', 'Delete', null], nullable: true })
  operation!: 'Create' | 'Update' | 'Delete' | null;

  /** @example ["You need the permission guildroles.create in this guild"] */
  reasons!: string[];
}

/** What the import does (or would do) to one setting. */
@ApiExtraModels(ImportedUpdateDto, ImportRefusalDto)
export class SettingImportDto {
  /** The entries created. */
  @ApiProperty({ type: 'array', items: KEY_SCHEMA })
  created!: SettingRow[];

  updated!: ImportedUpdateDto[];

  /** The keys of the entries deleted (present here, absent from the document). */
  @ApiProperty({ type: 'array', items: KEY_SCHEMA })
  deleted!: Record<string, unknown>[];

  /** The keys of the entries already as the document has them. */
  @ApiProperty({ type: 'array', items: KEY_SCHEMA })
  unchanged!: Record<string, unknown>[];

  refused!: ImportRefusalDto[];
}

/** Role and channel ids the document refers to (after the mapping) that this guild does not have. */
export class UnknownReferencesDto {
  roles!: string[];
  channels!: string[];
}

/** The import's report: per setting, what changes (or would), and what is refused. */
@ApiExtraModels(SettingImportDto)
export class ImportReportDto {
  dry_run!: boolean;

  /** Whether the changes were committed (never on a dry run, nor when anything is refused). */
  applied!: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(SettingImportDto) },
  })
  settings!: Record<string, SettingImportDto>;

  unknown_references!: UnknownReferencesDto;

  /** The revisions the import recorded (none on a dry run). */
  revisions!: RevisionDto[];
}
