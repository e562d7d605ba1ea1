import { Injectable } from '@nestjs/common';
import type {
  APIGuild,
  APIGuildMember,
  APIUser,
  APIThreadChannel,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { PlatformCache } from 'src/platform/platform-cache';
import { PlatformClient } from 'src/platform/platform.client';
import type { Lookup } from 'src/platform/platform.types';

/**
 * The bot's guild list is paged (200 per call), so it is cached longer than single lookups; a guild
 * the bot has just joined shows up in `bot_in_guilds` within this time.
 */
const BOT_GUILDS_TTL_MS = 60_000;

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

  async getActiveThreads(guildId: string): Promise<Lookup<APIThreadChannel[]>> {
    const result = await this.cache.getOrLoad(`threads:${guildId}`, async () => {
      const lookup = await this.client.getActiveThreads(guildId);
      // Only the threads are kept: the thread-member part is not used.
      return lookup.found ? { found: true as const, value: lookup.value.threads } : lookup;
    });
    return result as Lookup<APIThreadChannel[]>;
  }

  /** The ids of every guild the bot is in. */
  async getBotGuildIds(): Promise<ReadonlySet<string>> {
    const ids = await this.cache.getOrLoad(
      'bot-guilds',
      async () => (await this.client.getBotGuilds()).map((guild) => guild.id),
      { ttlMs: BOT_GUILDS_TTL_MS },
    );
    return new Set(ids);
  }

  getGuildMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember>> {
    return this.cache.getOrLoad(`member:${guildId}:${userId}`, () =>
      this.client.getGuildMember(guildId, userId),
    );
  }
}
