import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type {
  APIGuild,
  APIGuildMember,
  APIUser,
  APIThreadChannel,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { SingleFlight } from 'src/common/async/single-flight';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { AppConfig } from 'src/config/app-config';
import { lookupTtl, PLATFORM_CACHE } from 'src/platform/platform-cache';
import { GUILD_PAGE, PlatformClient } from 'src/platform/platform.client';
import { PlatformUnavailableError } from 'src/platform/platform.errors';
import type { Lookup } from 'src/platform/platform.types';
import { compareSnowflakes } from 'src/common/validation/snowflake';

/**
 * What the bot sees of the platform, cached briefly (PLATFORM_CACHE_TTL) and coalesced: ten
 * concurrent requests for one guild make one platform call. "Not found" answers are cached too, so a
 * guild the bot is not in does not cost a call per request.
 */
@Injectable()
export class PlatformService implements OnApplicationBootstrap {
  private botUser: Promise<APIUser> | null = null;
  /** The bot's user once `botUser` has settled with it. */
  private knownBotUser: APIUser | undefined;
  private readonly lookupTtl: (lookup: Lookup<unknown>) => number;
  /** Member loads of getGuildMemberWith under way, per cache key. */
  private readonly memberLoads = new SingleFlight<Lookup<APIGuildMember> | undefined>();

  constructor(
    private readonly client: PlatformClient,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
    config: AppConfig,
  ) {
    this.lookupTtl = lookupTtl(config);
  }

  /** The bot's user is read at start, so that no request waits for it. */
  onApplicationBootstrap(): void {
    // A failure here is retried by the first request that needs the bot's user.
    this.getBotUser().catch(() => undefined);
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

  /**
   * A guild's member; "not a member" is remembered as long as a member is. `refresh`: ask the
   * platform even if an answer is cached. `beforeCall` runs before a call is made (not for an
   * answer from the cache): a caller's budget for the calls it causes, refusing by throwing.
   */
  getGuildMember(
    guildId: string,
    userId: string,
    { refresh = false, beforeCall }: { refresh?: boolean; beforeCall?: () => Promise<void> } = {},
  ): Promise<Lookup<APIGuildMember>> {
    return this.cache.getOrLoad(
      memberKey(guildId, userId),
      async () => {
        await beforeCall?.();
        return this.client.getGuildMember(guildId, userId, userId === this.knownBotUser?.id);
      },
      { ttlMs: this.lookupTtl, refresh },
    );
  }

  /**
   * A guild's member as `load` reads it (the user's own token: src/guilds/user-member.service.ts),
   * kept under getGuildMember's key and for as long: an answer cached either way serves both, so a
   * repeat costs no call. Concurrent calls for one member share one load. `load` answering
   * undefined (it could not read the member) caches nothing, and neither do its errors. Its loads
   * do not join getGuildMember's, nor the other way round: a bot-token lookup never waits on a
   * load that may end without an answer.
   */
  async getGuildMemberWith(
    guildId: string,
    userId: string,
    load: () => Promise<Lookup<APIGuildMember> | undefined>,
  ): Promise<Lookup<APIGuildMember> | undefined> {
    const key = memberKey(guildId, userId);
    const cached = await this.cache.peek<Lookup<APIGuildMember>>(key);
    if (cached) return cached;
    return this.memberLoads.run(key, async () => {
      const lookup = await load();
      if (lookup) await this.cache.set(key, lookup, this.lookupTtl(lookup));
      return lookup;
    });
  }

  /** A guild's member as held in the cache (either token's answer), without a call. */
  heldGuildMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember> | undefined> {
    return this.cache.peek<Lookup<APIGuildMember>>(memberKey(guildId, userId));
  }

  /**
   * Which of `guildIds` the bot is in, read from the bot's own guild list in the ranges that hold
   * them: the list is sorted by id, so one page from the smallest id not yet settled settles every
   * id up to the page's last (or every id, from a short page). The platform answers this call 200
   * whatever the ids, so an invented id never counts against the invalid-request budget. At most
   * `maxCalls` pages are read; `settled` holds the ids they covered.
   */
  async botMembershipOf(
    guildIds: readonly string[],
    maxCalls: number,
    /** Asked before each call: false stops (a caller's budget is spent). */
    mayCall: () => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<{ found: ReadonlySet<string>; settled: ReadonlySet<string> }> {
    const wanted = [...new Set(guildIds)].sort(compareSnowflakes);
    // One id needs one guild of the list: the first from it, which is that guild or a later one.
    const pageSize = wanted.length === 1 ? 1 : GUILD_PAGE;
    const found = new Set<string>();
    const settled = new Set<string>();
    let next = 0;
    for (let calls = 0; next < wanted.length && calls < maxCalls; calls++) {
      if (!(await mayCall())) break;
      const page = await this.client.getBotGuildsFrom(wanted[next], pageSize);
      const onPage = new Set(page.map((guild) => guild.id));
      const last = page.length < pageSize ? null : page[page.length - 1].id;
      const start = next;
      while (
        next < wanted.length &&
        (last === null || compareSnowflakes(wanted[next], last) <= 0)
      ) {
        if (onPage.has(wanted[next])) found.add(wanted[next]);
        settled.add(wanted[next]);
        next += 1;
      }
      // A page starts at the id asked for, so it settles at least that one; anything else is a
      // platform answer this loop must not spin on.
      if (next === start) {
        throw new PlatformUnavailableError('GET /users/@me/guilds: a page out of order');
      }
    }
    return { found, settled };
  }

  /**
   * Whether the guild's context (the guild, its channels, its active threads and the bot's member)
   * is all held in the cache, answers "not found" included: opening it then costs no call.
   */
  async holdsGuild(guildId: string): Promise<boolean> {
    const bot = await this.getBotUser();
    const keys = [
      guildKey(guildId),
      channelsKey(guildId),
      threadsKey(guildId),
      memberKey(guildId, bot.id),
    ];
    const held = await Promise.all(keys.map((key) => this.cache.peek<unknown>(key)));
    return held.every((value) => value !== undefined);
  }

  /**
   * The platform refused the guild on another route (a member lookup answered "no such guild"):
   * the guild's own lookup is held as refused for as long as a refusal is, and its parts go.
   */
  async rememberRefusal(guildId: string): Promise<void> {
    const refused: Lookup<APIGuild> = { found: false, missing: 'guild' };
    const parts = await this.partKeys(guildId);
    await Promise.all([
      this.cache.set(guildKey(guildId), refused, this.lookupTtl(refused)),
      ...parts.map((key) => this.cache.delete(key)),
    ]);
  }

  /**
   * Drops a cached "the bot cannot see this guild" answer (kept long, see GUILD_NOT_FOUND_TTL_MS)
   * and the guild's parts, once the bot is known to be in the guild.
   */
  async forgetRefusal(guildId: string): Promise<void> {
    const guild = await this.cache.peek<Lookup<APIGuild>>(guildKey(guildId));
    if (!guild || guild.found) return;
    const keys = [guildKey(guildId), ...(await this.partKeys(guildId))];
    await Promise.all(keys.map((key) => this.cache.delete(key)));
  }

  /** The cache keys of what a guild's context is built from, beside the guild itself. */
  private async partKeys(guildId: string): Promise<string[]> {
    const bot = await this.getBotUser();
    return [channelsKey(guildId), threadsKey(guildId), memberKey(guildId, bot.id)];
  }
}

const guildKey = (guildId: string): string => `guild:${guildId}`;
const channelsKey = (guildId: string): string => `channels:${guildId}`;
const threadsKey = (guildId: string): string => `threads:${guildId}`;
const memberKey = (guildId: string, userId: string): string => `member:${guildId}:${userId}`;
