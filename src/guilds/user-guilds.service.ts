import { Inject, Injectable } from '@nestjs/common';
import type { RESTAPIPartialCurrentUserGuild } from 'discord-api-types/v10';
import { GrantService } from 'src/auth/grant.service';
import { AppConfig } from 'src/config/app-config';
import { guildIconUrl } from 'src/guilds/guild-icon';
import type { UserGuildDto, UserGuildsDto } from 'src/guilds/dto/user-guilds.dto';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { PLATFORM_CACHE } from 'src/platform/platform-cache';
import { PlatformClient } from 'src/platform/platform.client';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';

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
    private readonly membership: BotMembershipService,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
    config: AppConfig,
  ) {
    this.ttlMs = config.platform.userGuildsCacheTtlSeconds * 1000;
  }

  /**
   * `bot_in_guilds` comes from the bot's membership feed (docs/bot-membership.md); without a live
   * feed, from what was learned lately and the bot's guild list read around the user's guilds.
   * `refresh`: the user's list is read anew, and, without a live feed, the bot's membership of
   * exactly those guilds too, so an invite or a removal shows at once.
   */
  async list(userId: string, refresh: boolean): Promise<UserGuildsDto> {
    const guilds = await this.cache.getOrLoad(userGuildsKey(userId), () => this.fetch(userId), {
      ttlMs: this.ttlMs,
      refresh,
    });
    const botGuilds = await this.membership.botIn(
      guilds.map((guild) => guild.id),
      refresh,
      userId,
    );
    return answer(guilds, botGuilds);
  }

  /**
   * The ids of the user's guilds as last read with their own token (within
   * USER_GUILDS_CACHE_TTL), without a call; undefined when none is held.
   */
  async heldGuildIds(userId: string): Promise<ReadonlySet<string> | undefined> {
    const guilds = await this.cache.peek<UserGuildDto[]>(userGuildsKey(userId));
    return guilds && new Set(guilds.map((guild) => guild.id));
  }

  /**
   * The ids of the user's guilds read anew with their own token (and held as `list` holds them);
   * undefined when they cannot be read (no usable grant, the platform failing).
   */
  async readGuildIdsAgain(userId: string): Promise<ReadonlySet<string> | undefined> {
    try {
      const guilds = await this.cache.getOrLoad(userGuildsKey(userId), () => this.fetch(userId), {
        ttlMs: this.ttlMs,
        refresh: true,
      });
      return new Set(guilds.map((guild) => guild.id));
    } catch {
      return undefined;
    }
  }

  private async fetch(userId: string): Promise<UserGuildDto[]> {
    const guilds = await this.grants.withAccessToken(userId, (token) =>
      this.client.getUserGuilds(token),
    );
    return guilds.map(toUserGuild);
  }
}

const userGuildsKey = (userId: string): string => `user-guilds:${userId}`;

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
