import { Injectable } from '@nestjs/common';
import type {
  APIGuild,
  APIGuildMember,
  APIUser,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { PlatformCache } from 'src/platform/platform-cache';
import { PlatformClient } from 'src/platform/platform.client';
import type { Lookup } from 'src/platform/platform.types';

/**
 * What the bot sees of the platform, cached briefly (PLATFORM_CACHE_TTL) and coalesced: ten
 * concurrent requests for one guild make one platform call. "Not found" answers are cached too, so a
 * guild the bot is not in does not cost a call per request.
 */
@Injectable()
export class PlatformService {
  private botUser: Promise<APIUser> | null = null;

  constructor(
    private readonly client: PlatformClient,
    private readonly cache: PlatformCache,
  ) {}

  /** The bot's own user, fetched once per process (again only if that call failed). */
  getBotUser(): Promise<APIUser> {
    this.botUser ??= this.client.getBotUser().catch((error: unknown) => {
      this.botUser = null;
      throw error;
    });
    return this.botUser;
  }

  getGuild(guildId: string): Promise<Lookup<APIGuild>> {
    return this.cache.getOrLoad(`guild:${guildId}`, () => this.client.getGuild(guildId));
  }

  getGuildChannels(guildId: string): Promise<Lookup<RESTGetAPIGuildChannelsResult>> {
    return this.cache.getOrLoad(`channels:${guildId}`, () => this.client.getGuildChannels(guildId));
  }

  getGuildMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember>> {
    return this.cache.getOrLoad(`member:${guildId}:${userId}`, () =>
      this.client.getGuildMember(guildId, userId),
    );
  }
}
