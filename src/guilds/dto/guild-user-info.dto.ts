import { ApiProperty } from '@nestjs/swagger';
import { ApiGuildIcon } from 'src/guilds/dto/user-guilds.dto';

export class GuildRoleDto {
  /** @example "1100000000000000103" */
  id!: string;

  /** @example "Moderator" */
  name!: string;

  /**
   * Decimal bitfield.
   * @example "1099511627782"
   */
  permissions!: string;

  /** @example 9 */
  position!: number;
}

export class GuildChannelDto {
  /** @example "1100000000000000124" */
  id!: string;

  /** @example "general" */
  name!: string;

  /** The category, or for a thread its parent channel; null at the top level. */
  @ApiProperty({ type: String, nullable: true, example: '1100000000000000123' })
  parent_id!: string | null;

  /** @example 0 */
  position!: number;

  /**
   * The platform's channel type (0 text, 2 voice, 4 category, 5 announcement, 10–12 threads,
   * 13 stage, 15 forum, 16 media).
   * @example 0
   */
  type!: number;
}

export class GuildChannelPermissionsDto {
  /**
   * The user's effective permissions in the channel, as a decimal bitfield.
   * @example "70368744177664"
   */
  user!: string;

  /**
   * The bot's effective permissions in the channel, as a decimal bitfield.
   * @example "1099780130902"
   */
  bot!: string;

  channel!: GuildChannelDto;
}

/** `GET /users/@me/guilds/{guild_id}`. */
export class GuildUserInfoDto {
  /** @example "Demo Community" */
  name!: string;

  @ApiGuildIcon()
  icon!: string | null;

  /** @example "1100000000000000011" */
  owner_id!: string;

  /** Every role of the guild, from the highest down to @everyone. */
  roles!: GuildRoleDto[];

  /**
   * The user's role ids.
   * @example ["1100000000000000103"]
   */
  user_roles!: string[];

  /**
   * The bot's role ids.
   * @example ["1100000000000000102"]
   */
  bot_roles!: string[];

  /** The guild's channels and active threads in display order, with both members' permissions. */
  channels!: GuildChannelPermissionsDto[];
}
