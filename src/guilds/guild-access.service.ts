import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import type {
  APIGuild,
  APIGuildMember,
  APIThreadChannel,
  APIUser,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { allSettled } from 'src/common/async/all-settled';
import { Clock } from 'src/common/time/clock';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { GuildContext, type MemberAccess, type MemberGuildAccess } from 'src/guilds/guild-context';
import { BotMembershipService } from 'src/bot-guilds/bot-membership.service';
import { PlatformService } from 'src/platform/platform.service';
import type { Lookup } from 'src/platform/platform.types';

/** The platform answers a guild's context is built from; those memory does not hold are absent. */
interface PlatformAnswers {
  bot?: APIUser;
  /** Whether the bot is in the guild, when memory can tell. */
  botIn?: boolean;
  guild?: Lookup<APIGuild>;
  channels?: Lookup<RESTGetAPIGuildChannelsResult>;
  threads?: Lookup<APIThreadChannel[]>;
  botMember?: Lookup<APIGuildMember>;
}

const CONTEXT_REUSE_MS = 1_000;
const BOT_NOT_IN_GUILD = 'The bot is not in this guild';
const USER_NOT_MEMBER = 'You are not a member of this guild';

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

  constructor(
    private readonly platform: PlatformService,
    private readonly membership: BotMembershipService,
    private readonly clock: Clock,
  ) {}

  /**
   * The guild as the bot sees it; 404 `NotFound` when the bot is not in it. What memory holds is
   * used as it is, and only the rest is loaded, all at once. `caller` (a user id) pays for a
   * membership check the platform must answer (docs/bot-membership.md).
   */
  async guildContext(guildId: string, caller?: string): Promise<GuildContext> {
    const held = this.platformAnswersInMemory(guildId);
    const ready = this.contextOfAnswers(held);
    if (ready) return ready;
    await this.requireBotIn(guildId, held, caller);
    return this.loadContext(guildId, held);
  }

  /**
   * The guild as `guildContext` answers it, when everything it is built from is in memory (the
   * common case), read synchronously; undefined when something must be loaded or is not found
   * (`guildContext` answers those, with its errors).
   */
  cachedGuildContext(guildId: string): GuildContext | undefined {
    return this.contextOfAnswers(this.platformAnswersInMemory(guildId));
  }

  /**
   * The platform answers a guild's context is built from, as far as memory holds them. For a guild
   * the bot is known not to be in, nothing more is read.
   */
  private platformAnswersInMemory(guildId: string): PlatformAnswers {
    const bot = this.platform.cachedBotUser();
    const botIn = this.membership.heldAnswer(guildId);
    if (botIn === false) return { bot, botIn };
    return {
      bot,
      botIn,
      guild: this.platform.cachedGuild(guildId),
      channels: this.platform.cachedGuildChannels(guildId),
      threads: this.platform.cachedActiveThreads(guildId),
      botMember: bot && this.platform.cachedGuildMember(guildId, bot.id),
    };
  }

  /** The context, when the answers are all there and all found; undefined otherwise. */
  private contextOfAnswers(held: PlatformAnswers): GuildContext | undefined {
    const { botIn, guild, channels, threads, botMember } = held;
    if (!botIn || !guild?.found || !channels?.found || !threads?.found || !botMember?.found) {
      return undefined;
    }
    return this.contextFrom(guild, [channels, threads, botMember]);
  }

  /**
   * The guild and the user's member in it; 404 when the bot is not in it or the user is not. The
   * member is loaded together with the guild's parts: one platform round trip when cold.
   */
  async forMember(guildId: string, userId: string): Promise<MemberGuildAccess> {
    const { context, user } = await this.withMember(guildId, userId);
    if (!user) throw new AppException(ErrorCode.NotFound, USER_NOT_MEMBER);
    return { context, user };
  }

  /** As `forMember`, with null for a user who is not a member. */
  async withMember(
    guildId: string,
    userId: string,
  ): Promise<{ context: GuildContext; user: MemberAccess | null }> {
    const held = this.platformAnswersInMemory(guildId);
    const ready = this.contextOfAnswers(held);
    if (!ready) await this.requireBotIn(guildId, held, userId);
    const [context, member] = await allSettled([
      ready ?? this.loadContext(guildId, held),
      this.platform.getGuildMember(guildId, userId),
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
   * 404 `NotFound` unless the bot is in the guild; nothing else about the guild is loaded. `caller`
   * pays for a check the platform must answer.
   */
  async assertBotIn(guildId: string, caller?: string): Promise<void> {
    await this.requireBotIn(guildId, this.platformAnswersInMemory(guildId), caller);
  }

  /**
   * Membership first, from memory when it can tell: every id the bot is not in is answered 404
   * without a platform call about that guild (the platform counts its refusals against the bot).
   */
  private async requireBotIn(
    guildId: string,
    held: PlatformAnswers,
    caller: string | undefined,
  ): Promise<void> {
    const botIn = held.botIn ?? (await this.membership.isBotIn(guildId, caller));
    if (!botIn) throw new AppException(ErrorCode.NotFound, BOT_NOT_IN_GUILD);
  }

  /**
   * The guild, its parts and the bot's member, all asked at once (those memory holds, `held`, are
   * used as they are). A guild the platform refuses is marked left at once.
   */
  private async loadContext(guildId: string, held: PlatformAnswers): Promise<GuildContext> {
    const bot = held.bot ?? (await this.platform.getBotUser());
    const [guild, ...parts] = await allSettled([
      held.guild ?? this.platform.getGuild(guildId),
      held.channels ?? this.platform.getGuildChannels(guildId),
      held.threads ?? this.platform.getActiveThreads(guildId),
      held.botMember ?? this.platform.getGuildMember(guildId, bot.id),
    ]);
    if (!guild.found) return this.refused(guildId);
    return this.contextFrom(guild, parts);
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
    const sources = [guildLookup, ...parts];
    const now = this.clock.now();
    const reusable = this.contexts.get(guild.id);
    if (
      reusable &&
      now.getTime() - reusable.context.now.getTime() < CONTEXT_REUSE_MS &&
      reusable.sources.every((source, i) => source === sources[i])
    ) {
      return reusable.context;
    }
    const [channels, threads, botMember] = parts;
    const context = new GuildContext(
      guild,
      [...found(channels, BOT_NOT_IN_GUILD), ...found(threads, BOT_NOT_IN_GUILD)],
      found(botMember, BOT_NOT_IN_GUILD),
      now,
    );
    this.contexts.set(guild.id, { sources, context });
    return context;
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
    const cached = this.cachedMemberOf(context, userId);
    if (cached !== undefined) return cached;
    return accessIn(
      context,
      await this.platform.getGuildMember(context.guild.id, userId, { beforeCall }),
    );
  }

  /** `memberOf` from memory, synchronously; undefined when the member must be looked up. */
  cachedMemberOf(context: GuildContext, userId: string): MemberAccess | null | undefined {
    const member = this.platform.cachedGuildMember(context.guild.id, userId);
    return member && accessIn(context, member);
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
