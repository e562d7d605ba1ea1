import { ApiProperty } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsBooleanText } from 'src/common/validation/boolean-text';

/** A guild's icon: its CDN URL (GIF when animated), or null. */
export const ApiGuildIcon = (): PropertyDecorator =>
  ApiProperty({
    type: String,
    nullable: true,
    description: "The icon's CDN URL (GIF when animated), or null.",
    example: 'https://cdn.discordapp.com/icons/1100000000000000100/a_9c1f0e3b.gif',
  });

export class UserGuildsQueryDto {
  /** `true` reads the list from the platform now instead of the cache. */
  @ApiProperty({ required: false, type: Boolean })
  @IsOptional()
  @IsBooleanText()
  refresh?: string;
}

export class UserGuildDto {
  /** @example "1100000000000000100" */
  id!: string;

  /** @example "Demo Community" */
  name!: string;

  @ApiGuildIcon()
  icon!: string | null;

  /** Whether the user owns the guild. */
  owner!: boolean;

  /**
   * The user's guild-level permissions as a decimal bitfield (no channel overwrites).
   * @example "1099511627782"
   */
  permissions!: string;
}

/** `GET /users/@me/guilds`. */
export class UserGuildsDto {
  guilds!: UserGuildDto[];

  /**
   * The ids of those guilds the bot is in.
   * @example ["1100000000000000100"]
   */
  bot_in_guilds!: string[];
}
