import { ApiProperty } from '@nestjs/swagger';

const LOCALIZATIONS = {
  type: 'object',
  additionalProperties: { type: 'string' },
  example: { de: 'bannen', fr: 'bannir' },
} as const;

/** Name and description with their translations (locale → text), shared by commands and options. */
export class LocalizedTextDto {
  /** @example "ban" */
  name!: string;

  @ApiProperty(LOCALIZATIONS)
  name_localizations!: Record<string, string>;

  /** Empty for context-menu commands. @example "Ban a member from the server" */
  description!: string;

  @ApiProperty(LOCALIZATIONS)
  description_localizations!: Record<string, string>;
}

export class CommandChoiceDto {
  /** @example "Last 24 hours" */
  name!: string;

  @ApiProperty(LOCALIZATIONS)
  name_localizations!: Record<string, string>;

  /** A string for string options, a number for integer and number options. */
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }], example: 1 })
  value!: string | number;
}

export class CommandOptionDto extends LocalizedTextDto {
  autocomplete!: boolean;

  /** For channel options: the channel types offered (0 text, 2 voice, 5 announcement, …). */
  @ApiProperty({ type: [Number], example: [0, 5] })
  channel_types!: number[];

  @ApiProperty({ type: () => [CommandChoiceDto] })
  choices!: CommandChoiceDto[];

  @ApiProperty({ type: Number, nullable: true, example: 512 })
  max_length!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  min_length!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  max_value!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  min_value!: number | null;

  required!: boolean;

  /**
   * 1 sub-command, 2 sub-command group, 3 string, 4 integer, 5 boolean, 6 user, 7 channel,
   * 8 role, 9 mentionable, 10 number, 11 attachment.
   * @example 3
   */
  type!: number;

  /** The options of a sub-command or group; empty otherwise. */
  @ApiProperty({ type: () => [CommandOptionDto] })
  options!: CommandOptionDto[];
}

export class CommandDto extends LocalizedTextDto {
  /** Where the command can be installed: 0 guild, 1 user. */
  @ApiProperty({ type: [Number], example: [0] })
  integration_types!: number[];

  nsfw!: boolean;

  /** 1 chat input (slash command), 2 user context menu, 3 message context menu. @example 1 */
  type!: number;

  @ApiProperty({ type: () => [CommandOptionDto] })
  options!: CommandOptionDto[];
}

/** `GET /bot-state`. */
export class BotStateDto {
  commands!: CommandDto[];
}
