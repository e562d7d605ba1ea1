import { Injectable } from '@nestjs/common';
import type {
  GuildChannelPermissionsDto,
  GuildUserInfoDto,
} from 'src/guilds/dto/guild-user-info.dto';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import { type GuildChannel, type MemberAccess } from 'src/guilds/guild-context';
import { guildIconUrl } from 'src/guilds/guild-icon';
import { sortRolesByHierarchy } from 'src/guilds/role-hierarchy';

/** `GET /users/@me/guilds/{guild_id}`: the guild as the user and the bot see it. */
@Injectable()
export class GuildInfoService {
  constructor(private readonly access: GuildAccessService) {}

  async forUser(guildId: string, userId: string): Promise<GuildUserInfoDto> {
    const { context, user } = await this.access.forMember(guildId, userId);
    const { guild, bot } = context;
    return {
      name: guild.name,
      icon: guildIconUrl(guild.id, guild.icon),
      owner_id: guild.owner_id,
      roles: sortRolesByHierarchy(guild.roles).map((role) => ({
        id: role.id,
        name: role.name,
        permissions: role.permissions,
        position: role.position,
      })),
      user_roles: [...user.member.roles],
      bot_roles: [...bot.member.roles],
      channels: context.channels.map((channel) => channelEntry(channel, user, bot)),
    };
  }
}

function channelEntry(
  channel: GuildChannel,
  user: MemberAccess,
  bot: MemberAccess,
): GuildChannelPermissionsDto {
  return {
    user: user.permissionsIn(channel).toString(),
    bot: bot.permissionsIn(channel).toString(),
    channel: {
      id: channel.id,
      name: channel.name ?? '',
      parent_id: channel.parent_id ?? null,
      // Threads have no position of their own.
      position:
        'position' in channel && typeof channel.position === 'number' ? channel.position : 0,
      type: channel.type,
    },
  };
}
