import { Inject, Injectable } from '@nestjs/common';
import type {
  APIGuild,
  APIGuildMember,
  APIUser,
  APIThreadChannel,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { AppConfig } from 'src/config/app-config';
import { lookupTtl, PLATFORM_CACHE } from 'src/platform/platform-cache';
import { GUILD_PAGE, PlatformClient } from 'src/platform/platform.client';
import { PlatformUnavailableError } from 'src/platform/platform.errors';
import type { Lookup } from 'src/platform/platform.types';
import { Clock } from 'src/common/time/clock';

/**
 * The bot's guild list is paged (200 per call), so it is cached longer than single lookups; a guild
 * the bot has just joined shows up in `bot_in_guilds` within this time, or at once on a refresh.
 */
const BOT_GUILDS_TTL_MS = 60_000;
/** Not 'bot-guilds', which held a bare array: instances of both versions may share one Redis. */
const BOT_GUILDS_KEY = 'bot-guild-list';

/** The bot's guild ids as cached, with the instant the list was read from the platform plus its TTL. */
interface BotGuildList {
  ids: string[];
  expiresAt: number;
}

/**
 * What the bot sees of the platform, cached briefly (PLATFORM_CACHE_TTL) and coalesced: ten
 * concurrent requests for one guild make one platform call. "Not found" answers are cached too, so a
 * guild the bot is not in does not cost a call per request.
 */
@Injectable()
export class PlatformService {
  private botUser: Promise<APIUser> | null = null;
  /** The bot's user once `botUser` has settled with it. */
  private knownBotUser: APIUser | undefined;
  /** The set built from the last cached list, reused while the cache serves that same list. */
  private botGuildSet: { list: BotGuildList; ids: ReadonlySet<string> } | null = null;
  /** Refreshes merge into the cached list one at a time, so none overwrites another's. */
  private merging: Promise<unknown> = Promise.resolve();
  private readonly lookupTtl: (lookup: Lookup<unknown>) => number;

  constructor(
    private readonly client: PlatformClient,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.lookupTtl = lookupTtl(config);
  }

  /** The bot's own user, fetched once per process (again only if that call failed). */
  getBotUser(): Promise<APIUser> {
    this.botUser ??= this.client.getBotUser().then(
      (user) => (this.knownBotUser = user),
      (error: unknown) => {
        this.botUser = null;
        throw error;
      },
    );
    return this.botUser;
  }

  getGuild(guildId: string): Promise<Lookup<APIGuild>> {
    return this.cache.getOrLoad(guildKey(guildId), () => this.client.getGuild(guildId), {
      ttlMs: this.lookupTtl,
    });
  }

  getGuildChannels(guildId: string): Promise<Lookup<RESTGetAPIGuildChannelsResult>> {
    return this.cache.getOrLoad(channelsKey(guildId), () => this.client.getGuildChannels(guildId), {
      ttlMs: this.lookupTtl,
    });
  }

  async getActiveThreads(guildId: string): Promise<Lookup<APIThreadChannel[]>> {
    const result = await this.cache.getOrLoad(
      threadsKey(guildId),
      async () => {
        const lookup = await this.client.getActiveThreads(guildId);
        // Only the threads are kept: the thread-member part is not used.
        return lookup.found ? { found: true as const, value: lookup.value.threads } : lookup;
      },
      { ttlMs: this.lookupTtl },
    );
    return result as Lookup<APIThreadChannel[]>;
  }

  getGuildMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember>> {
    return this.cache.getOrLoad(
      memberKey(guildId, userId),
      () => this.client.getGuildMember(guildId, userId),
      { ttlMs: this.lookupTtl },
    );
  }

  /** The ids of every guild the bot is in (the whole paged list, cached for BOT_GUILDS_TTL_MS). */
  async getBotGuildIds(): Promise<ReadonlySet<string>> {
    const list = await this.cache.getOrLoad<BotGuildList>(
      BOT_GUILDS_KEY,
      async () => ({
        ids: (await this.client.getBotGuilds()).map((guild) => guild.id),
        expiresAt: this.clock.nowMs() + BOT_GUILDS_TTL_MS,
      }),
      // A list merged by a refresh keeps the expiry of the list it was merged into.
      { ttlMs: (loaded) => loaded.expiresAt - this.clock.nowMs() },
    );
    return this.botGuildIdsOf(list);
  }

  private botGuildIdsOf(list: BotGuildList): ReadonlySet<string> {
    if (this.botGuildSet?.list !== list) this.botGuildSet = { list, ids: new Set(list.ids) };
    return this.botGuildSet.ids;
  }

  // What is in memory, read synchronously (undefined when a load is needed): a request served
  // from memory then waits on no promise. The methods above answer the same, loading if needed.

  cachedBotUser(): APIUser | undefined {
    return this.knownBotUser;
  }

  cachedBotGuildIds(): ReadonlySet<string> | undefined {
    const list = this.cache.cached<BotGuildList>(BOT_GUILDS_KEY);
    return list && this.botGuildIdsOf(list);
  }

  cachedGuild(guildId: string): Lookup<APIGuild> | undefined {
    return this.cache.cached(guildKey(guildId));
  }

  cachedGuildChannels(guildId: string): Lookup<RESTGetAPIGuildChannelsResult> | undefined {
    return this.cache.cached(channelsKey(guildId));
  }

  cachedActiveThreads(guildId: string): Lookup<APIThreadChannel[]> | undefined {
    return this.cache.cached(threadsKey(guildId));
  }

  cachedGuildMember(guildId: string, userId: string): Lookup<APIGuildMember> | undefined {
    return this.cache.cached(memberKey(guildId, userId));
  }

  /**
   * Whether the bot is in the guild, by its own cached guild list: a guild id nobody has seen costs
   * no platform call about that guild.
   */
  async isBotInGuild(guildId: string): Promise<boolean> {
    return (await this.getBotGuildIds()).has(guildId);
  }

  /**
   * Which of `guildIds` (a user's guilds, on an explicit refresh) the bot is in now, read from the
   * bot's own guild list in the ranges that hold them: the list is sorted by id, so one page from
   * the smallest id not yet covered settles every id up to the page's last (or every id, from a
   * short page). That is at most one call per guild of the user, whatever the bot's guild count.
   * What was learned is merged into the cached list, and cached "bot cannot see this guild"
   * answers of guilds now found are dropped.
   */
  async refreshBotMembership(guildIds: readonly string[]): Promise<ReadonlySet<string>> {
    const wanted = [...new Set(guildIds)].sort(compareIds);
    const found = new Set<string>();
    let next = 0;
    while (next < wanted.length) {
      const page = await this.client.getBotGuildsFrom(wanted[next]);
      const onPage = new Set(page.map((guild) => guild.id));
      const last = page.length < GUILD_PAGE ? null : page[page.length - 1].id;
      const start = next;
      while (next < wanted.length && (last === null || compareIds(wanted[next], last) <= 0)) {
        if (onPage.has(wanted[next])) found.add(wanted[next]);
        next += 1;
      }
      // A page starts at the id asked for, so it settles at least that one; anything else is a
      // platform answer this loop must not spin on.
      if (next === start) {
        throw new PlatformUnavailableError('GET /users/@me/guilds: a page out of order');
      }
    }
    const merge = this.merging.then(() => this.mergeBotGuilds(wanted, found));
    this.merging = merge.catch(() => undefined);
    await merge;
    return found;
  }

  /** `checked`: guild ids whose membership was just read; `found`: those the bot is in. */
  private async mergeBotGuilds(checked: string[], found: ReadonlySet<string>): Promise<void> {
    const cached = await this.cache.peek<BotGuildList>(BOT_GUILDS_KEY);
    const before = new Set(cached?.ids ?? []);
    const joined = [...found].filter((id) => !before.has(id));
    const ttlMs = cached ? cached.expiresAt - this.clock.nowMs() : 0;
    // Without a cached list there is nothing to correct: the next read loads the whole list anew.
    if (cached && ttlMs > 0) {
      const left = new Set(checked.filter((id) => !found.has(id)));
      const ids = [...cached.ids.filter((id) => !left.has(id)), ...joined];
      await this.cache.set(BOT_GUILDS_KEY, { ids, expiresAt: cached.expiresAt }, ttlMs);
    }
    if (joined.length === 0) return;
    const bot = await this.getBotUser();
    await Promise.all(
      joined.flatMap((id) =>
        [guildKey(id), channelsKey(id), threadsKey(id), memberKey(id, bot.id)].map((key) =>
          this.cache.delete(key),
        ),
      ),
    );
  }
}

const guildKey = (guildId: string): string => `guild:${guildId}`;
const channelsKey = (guildId: string): string => `channels:${guildId}`;
const threadsKey = (guildId: string): string => `threads:${guildId}`;
const memberKey = (guildId: string, userId: string): string => `member:${guildId}:${userId}`;

/** Snowflakes compared as numbers (BigInt): "9" comes before "10". */
function compareIds(a: string, b: string): number {
  const diff = BigInt(a) - BigInt(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}
