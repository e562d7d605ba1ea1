import { Inject, Injectable } from '@nestjs/common';
import type { RESTAPIPartialCurrentUserGuild } from 'discord-api-types/v10';
import { GrantService } from 'src/auth/grant.service';
import { AppConfig } from 'src/config/app-config';
import { guildIconUrl } from 'src/guilds/guild-icon';
import type { UserGuildDto, UserGuildsDto } from 'src/guilds/dto/user-guilds.dto';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { PLATFORM_CACHE } from 'src/platform/platform-cache';
import { PlatformClient } from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';

/**
 * The guilds of a user, read with the user's own grant (refreshed when expired) and cached per
 * user for USER_GUILDS_CACHE_TTL, beside which of them the bot is in.
 */
@Injectable()
export class UserGuildsService {
  private readonly ttlMs: number;

  constructor(
    private readonly grants: GrantService,
    private readonly client: PlatformClient,
    private readonly platform: PlatformService,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
    config: AppConfig,
  ) {
    this.ttlMs = config.platform.userGuildsCacheTtlSeconds * 1000;
  }

  /**
   * `refresh`: the user's list is read anew, and the bot's membership of exactly those guilds too
   * (a few pages of the bot's sorted list, not all of it), so an invite or a removal shows at once.
   */
  async list(userId: string, refresh: boolean): Promise<UserGuildsDto> {
    const userGuilds = this.cache.getOrLoad(`user-guilds:${userId}`, () => this.fetch(userId), {
      ttlMs: this.ttlMs,
      refresh,
    });
    if (refresh) {
      const guilds = await userGuilds;
      const ids = guilds.map((guild) => guild.id);
      return answer(guilds, await this.platform.refreshBotMembership(ids));
    }
    const [guilds, botGuilds] = await Promise.all([userGuilds, this.platform.getBotGuildIds()]);
    return answer(guilds, botGuilds);
  }

  private async fetch(userId: string): Promise<UserGuildDto[]> {
    const guilds = await this.grants.withAccessToken(userId, (token) =>
      this.client.getUserGuilds(token),
    );
    return guilds.map(toUserGuild);
  }
}

function answer(guilds: UserGuildDto[], botGuilds: ReadonlySet<string>): UserGuildsDto {
  return {
    guilds,
    bot_in_guilds: guilds.filter((guild) => botGuilds.has(guild.id)).map((guild) => guild.id),
  };
}

function toUserGuild(guild: RESTAPIPartialCurrentUserGuild): UserGuildDto {
  return {
    id: guild.id,
    name: guild.name,
    icon: guildIconUrl(guild.id, guild.icon),
    owner: guild.owner,
    permissions: guild.permissions,
  };
}
