import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIn, IsString, Length } from 'class-validator';
import type { ExecutableOperation } from 'src/settings/schema/settings-schema';

const OPERATIONS: ExecutableOperation[] = ['View', 'Create', 'Update', 'Delete', 'Reorder'];

/** A row (or fields) of a setting: its columns are the setting's, listed by `GET …/settings`. */
const ROW_SCHEMA = { type: 'object', additionalProperties: true } as const;

/** `POST /guilds/{guild_id}/settings`. */
export class ExecuteSettingDto {
  /** The setting's id. @example "guildroles" */
  @IsString({ message: 'setting must be a string' })
  @Length(1, 64, { message: 'setting must be 1 to 64 characters' })
  setting!: string;

  @ApiProperty({ enum: OPERATIONS, example: 'View' })
  @IsIn(OPERATIONS, { message: `operation must be one of ${OPERATIONS.join(', ')}` })
  operation!: ExecutableOperation;

  /**
   * The operation's fields, as the setting's `validation_template` describes them: an object, or
   * for Reorder an array of `{<primary key>, <index_by>}`.
   */
  @ApiProperty({
    oneOf: [ROW_SCHEMA, { type: 'array', items: ROW_SCHEMA }],
    example: { limit: 25 },
  })
  @IsDefined({ message: 'fields is required (use {} for none)' })
  fields!: unknown;
}

/** `{type: "Ok", data}`: what the operation produced. */
export class SettingResultDto {
  @ApiProperty({ enum: ['Ok'] })
  type!: 'Ok';

  /** View: the rows; Create and Update: the stored row; Delete: the primary key; Reorder: the rows. */
  @ApiProperty({
    oneOf: [ROW_SCHEMA, { type: 'array', items: ROW_SCHEMA }],
    example: [{ role_id: '1100000000000000103', perms: ['guildroles.view'], index: 1 }],
  })
  data!: unknown;
}
