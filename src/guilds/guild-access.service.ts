import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import type {
  APIGuild,
  APIGuildMember,
  APIThreadChannel,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { allSettled } from 'src/common/async/all-settled';
import { Clock } from 'src/common/time/clock';
import { requestContext, type RequestContext } from 'src/common/http/request-context';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { GuildContext, type MemberAccess, type MemberGuildAccess } from 'src/guilds/guild-context';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import {
  GuildStateService,
  type LiveGuildState,
} from 'src/bot-reports/guild-state/guild-state.service';
import { PlatformService } from 'src/platform/platform.service';
import type { Lookup } from 'src/platform/platform.types';
import { UserMemberService } from 'src/guilds/user-member.service';
import { UserGuildsService } from 'src/guilds/user-guilds.service';

const CONTEXT_REUSE_MS = 1_000;
const BOT_NOT_IN_GUILD = 'The bot is not in this guild';
const USER_NOT_MEMBER = 'You are not a member of this guild';
const NON_MEMBER_HOLDS_NOTHING =
  'You are not a member of this guild, so you hold none of its permissions';

/** Who a guild's load is for, and what they are told if they are known not to be a member. */
interface LoadFor {
  userId: string;
  notMember: () => AppException;
}

/**
 * What other modules need to know about a guild: the cached platform data, the caller's and the
 * bot's members, their permissions and highest roles. Every module asks here instead of computing
 * permissions itself.
 */
@Injectable()
export class GuildAccessService {
  /**
   * The last context built per guild, reused while the platform answers behind it are the same
   * cached objects and it is under a second old (timeouts are judged against its `now`).
   */
  private readonly contexts = new LRUCache<string, { sources: unknown[]; context: GuildContext }>({
    ...entryBound(1_000),
  });

  /**
   * Per request, its one `guild-load` charge: a cold guild and its caller's member loaded for the
   * same request are one load, and every part waits on (and is refused by) the same charge.
   */
  private readonly charges = new WeakMap<RequestContext, Promise<void>>();

  constructor(
    private readonly platform: PlatformService,
    private readonly membership: BotMembershipService,
    private readonly guildStates: GuildStateService,
    private readonly userMembers: UserMemberService,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly userGuilds: UserGuildsService,
  ) {}

  /**
   * The guild as the bot sees it; 404 `NotFound` when the bot is not in it. Its parts are asked
   * at once (each answered from the platform cache when it holds it). `caller` (a user id) pays for
   * a membership check the platform must answer (docs/bot-membership.md).
   */
  async guildContext(guildId: string, caller?: string): Promise<GuildContext> {
    await this.assertBotIn(guildId, caller);
    return this.loadContext(guildId);
  }

  /**
   * The guild and the user's member in it; 404 when the bot is not in it or the user is not. The
   * member is loaded together with the guild's parts: one platform round trip when cold.
   */
  async forMember(guildId: string, userId: string): Promise<MemberGuildAccess> {
    const { context, user } = await this.withMember(
      guildId,
      userId,
      () => new AppException(ErrorCode.NotFound, USER_NOT_MEMBER),
    );
    if (!user) throw new AppException(ErrorCode.NotFound, USER_NOT_MEMBER);
    return { context, user };
  }

  /**
   * As `forMember`, with null for a user who is not a member. `userId` is the caller: their member
   * is read with their own token where their login allows it (UserMemberService), so a guild whose
   * state the feed holds costs no bot-token call at all.
   */
  async withMember(
    guildId: string,
    userId: string,
    notMember: () => AppException = () =>
      new AppException(ErrorCode.Restricted, NON_MEMBER_HOLDS_NOTHING),
  ): Promise<{ context: GuildContext; user: MemberAccess | null }> {
    await this.assertBotIn(guildId, userId);
    const [context, member] = await allSettled([
      this.loadContext(guildId, { userId, notMember }),
      this.ownMember(guildId, userId),
    ]);
    // "No such guild" for the member of a guild held as found: an answer from before the bot
    // (re)joined it, asked again once; if the platform says it again, the bot has left.
    const current = refusesGuild(member)
      ? await this.platform.getGuildMember(guildId, userId, { refresh: true })
      : member;
    if (refusesGuild(current)) return this.refused(guildId);
    return { context, user: accessIn(context, current) };
  }

  /**
   * The caller's member: with their own token when it can be used, else with the bot's, charged to
   * the caller's `guild-load` budget before the call (not for an answer held): a guild the feed
   * holds costs the bot token nothing else, so this lookup is the request's load.
   */
  private async ownMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember>> {
    return (
      (await this.userMembers.ownMember(guildId, userId)) ??
      this.platform.getGuildMember(guildId, userId, { beforeCall: () => this.chargeColdLoad() })
    );
  }

  /**
   * 404 `NotFound` unless the bot is in the guild; nothing else about the guild is loaded. Every
   * id the bot is not in is answered without a platform call about that guild (the platform
   * counts its refusals against the bot). `caller` pays for a check the platform must answer.
   */
  async assertBotIn(guildId: string, caller?: string): Promise<void> {
    if (!(await this.membership.isBotIn(guildId, caller))) {
      throw new AppException(ErrorCode.NotFound, BOT_NOT_IN_GUILD);
    }
  }

  /**
   * The guild as the bot's feed holds it while that is live (no platform call: docs/guild-state.md);
   * otherwise its parts and the bot's member from the platform, all asked at once, once the
   * request's user has paid for them. A guild the platform refuses is marked left at once. A load
   * `for` a user known not to be a member (their own guild list, or their member, as held) is
   * refused before it costs anything: a non-member holds nothing in the guild.
   */
  private async loadContext(guildId: string, loadFor?: LoadFor): Promise<GuildContext> {
    const fed = await this.guildStates.live(guildId);
    if (fed) return this.contextFromFeed(fed);
    if (!(await this.platform.holdsGuild(guildId))) {
      if (loadFor && (await this.knownNotMember(guildId, loadFor.userId))) {
        throw loadFor.notMember();
      }
      await this.chargeColdLoad();
    }
    const bot = await this.platform.getBotUser();
    const [guild, ...parts] = await allSettled([
      this.platform.getGuild(guildId),
      this.platform.getGuildChannels(guildId),
      this.platform.getActiveThreads(guildId),
      this.platform.getGuildMember(guildId, bot.id),
    ]);
    if (!guild.found) return this.refused(guildId);
    return this.contextFrom(guild, parts);
  }

  /**
   * A guild (or the caller's member in it) about to be loaded from the platform with the bot token
   * (not cached) is charged to the request's user, whatever the route: their `guild-load` budget,
   * 429 with `Retry-After` once spent, before the bot token pays anything (docs/request-costs.md).
   * Once per request. Work outside a user's request is not charged.
   */
  private chargeColdLoad(): Promise<void> {
    const store = requestContext.getStore();
    const userId = store?.userId;
    if (!store || !userId || !this.limiter.enabled) return Promise.resolve();
    let charge = this.charges.get(store);
    if (!charge) {
      charge = this.limiter.count('guild-load', userId).then((state) => {
        if (state.blocked) throw this.limiter.refusal(state);
      });
      this.charges.set(store, charge);
    }
    return charge;
  }

  /**
   * Whether the user is known not to be in the guild, without a bot-token call: their member
   * answered "not a member" lately, or their own guild list (read with their token) does not list
   * it. A list held from before may predate their joining, so it is read again with their own
   * token first (no bot-token call), charged to their `guild-check` budget; once that is spent,
   * the list as held stands (docs/request-costs.md). A list that cannot be read settles nothing.
   */
  private async knownNotMember(guildId: string, userId: string): Promise<boolean> {
    const [guilds, member] = await Promise.all([
      this.userGuilds.heldGuildIds(userId),
      this.platform.heldGuildMember(guildId, userId),
    ]);
    if (member !== undefined && !member.found && member.missing === 'member') return true;
    if (!guilds || guilds.has(guildId)) return false;
    if (this.limiter.enabled && (await this.limiter.count('guild-check', userId)).blocked) {
      return true;
    }
    const fresh = await this.userGuilds.readGuildIdsAgain(userId);
    return fresh !== undefined && !fresh.has(guildId);
  }

  /**
   * The platform refused the guild: the bot is not in it. Its held answers go and the refusal is
   * kept, so the next request costs no platform call about it; the feed marks it left.
   */
  private async refused(guildId: string): Promise<never> {
    await Promise.all([
      this.platform.rememberRefusal(guildId),
      this.membership.refusedByPlatform(guildId),
    ]);
    throw new AppException(ErrorCode.NotFound, BOT_NOT_IN_GUILD);
  }

  /** The context of a fed state: the last one built from the same version, while it may be reused. */
  private contextFromFeed(fed: LiveGuildState): GuildContext {
    return this.reusedContext(
      fed.guild.id,
      [fed],
      () =>
        new GuildContext(
          fed.guild,
          [...fed.channels, ...fed.threads],
          fed.botMember,
          this.clock.now(),
        ),
    );
  }

  /** The last context built for the guild from the same sources, while under a second old. */
  private reusedContext(
    guildId: string,
    sources: unknown[],
    build: () => GuildContext,
  ): GuildContext {
    const reusable = this.contexts.get(guildId);
    if (
      reusable &&
      this.clock.nowMs() - reusable.context.now.getTime() < CONTEXT_REUSE_MS &&
      reusable.sources.length === sources.length &&
      reusable.sources.every((source, i) => source === sources[i])
    ) {
      return reusable.context;
    }
    const context = build();
    this.contexts.set(guildId, { sources, context });
    return context;
  }

  /** The context of these platform answers: the last one built, while it may be reused. */
  private contextFrom(
    guildLookup: Lookup<APIGuild>,
    parts: [
      Lookup<RESTGetAPIGuildChannelsResult>,
      Lookup<APIThreadChannel[]>,
      Lookup<APIGuildMember>,
    ],
  ): GuildContext {
    const guild = found(guildLookup, BOT_NOT_IN_GUILD);
    const [channels, threads, botMember] = parts;
    return this.reusedContext(
      guild.id,
      [guildLookup, ...parts],
      () =>
        new GuildContext(
          guild,
          [...found(channels, BOT_NOT_IN_GUILD), ...found(threads, BOT_NOT_IN_GUILD)],
          found(botMember, BOT_NOT_IN_GUILD),
          this.clock.now(),
        ),
    );
  }

  /**
   * The user's member in a guild, or null when the user is not a member. `beforeCall` runs before
   * a platform call (not for a remembered answer): the caller's budget for the calls it causes.
   */
  async memberOf(
    context: GuildContext,
    userId: string,
    beforeCall?: () => Promise<void>,
  ): Promise<MemberAccess | null> {
    return accessIn(
      context,
      await this.platform.getGuildMember(context.guild.id, userId, { beforeCall }),
    );
  }
}

/** A lookup answered "no such guild" (403 Missing Access or 404 Unknown Guild). */
function refusesGuild(lookup: Lookup<unknown>): boolean {
  return !lookup.found && lookup.missing === 'guild';
}

function accessIn(context: GuildContext, member: Lookup<APIGuildMember>): MemberAccess | null {
  return member.found ? context.accessOf(member.value) : null;
}

function found<T>(lookup: Lookup<T>, message: string): T {
  if (!lookup.found) throw new AppException(ErrorCode.NotFound, message);
  return lookup.value;
}
