import { Inject, Injectable, Logger } from '@nestjs/common';
import type { APIGuildMember } from 'discord-api-types/v10';
import { GrantService, MEMBER_READ_SCOPE } from 'src/auth/grant.service';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { PLATFORM_CACHE } from 'src/platform/platform-cache';
import {
  PlatformClient,
  PlatformRateLimitedError,
  PlatformScopeRefusedError,
} from 'src/platform/platform.client';
import { PlatformRequestError } from 'src/platform/platform.errors';
import { PlatformService } from 'src/platform/platform.service';
import type { Lookup } from 'src/platform/platform.types';

/** After a 429, the user's route is left alone for the platform's wait, within these bounds. */
export const MIN_RATE_LIMIT_PAUSE_MS = 1_000;
export const MAX_RATE_LIMIT_PAUSE_MS = 10 * 60_000;
/** After the platform refused the scope, the user's route is left alone this long. */
export const SCOPE_REFUSED_PAUSE_MS = 60 * 60_000;

/** Why the user's route is left alone for a while (kept in the platform cache, per user). */
interface Pause {
  reason: 'rate_limited' | 'scope_refused';
}

/**
 * The caller's own member in a guild (their roles and timeout) read with the caller's own OAuth2
 * grant (scope `guilds.members.read`), which spends the user's rate limits instead of the bot's
 * (docs/authentication.md, "The user's own member"). When the user's token cannot be used, the
 * caller falls back to the bot token's lookup (`PlatformService.getGuildMember`).
 */
@Injectable()
export class UserMemberService {
  private readonly logger = new Logger(UserMemberService.name);

  constructor(
    private readonly grants: GrantService,
    private readonly client: PlatformClient,
    private readonly platform: PlatformService,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
  ) {}

  /**
   * The user's member in the guild, `{found: false, missing: 'member'}` when the user is not in
   * it, or undefined when the user's token cannot be used: no grant (a user known only from an
   * API token), a grant without the scope, a dead grant (refused on refresh or by the call: it is
   * retired), the platform refusing the scope, the user's route rate limited, or an answer this
   * service does not expect. An expired grant is refreshed first (GrantService). Cached and
   * coalesced with the bot's member lookups (same key, same lifetimes): a member cached either
   * way is answered without a call. A platform outage, or the invalid-request budget spent,
   * throws as the bot's lookup would.
   */
  ownMember(guildId: string, userId: string): Promise<Lookup<APIGuildMember> | undefined> {
    return this.platform.getGuildMemberWith(guildId, userId, () => this.read(guildId, userId));
  }

  private async read(guildId: string, userId: string): Promise<Lookup<APIGuildMember> | undefined> {
    // A paused route is not asked: its refusals (403, 429) count against the address's
    // invalid-request budget, which the bot's calls share.
    if (await this.cache.peek<Pause>(pauseKey(userId))) return undefined;
    try {
      return await this.grants.withScopedAccessToken(userId, MEMBER_READ_SCOPE, (accessToken) =>
        this.client.getCurrentUserGuildMember(accessToken, guildId),
      );
    } catch (error) {
      if (error instanceof PlatformRateLimitedError) {
        const pauseMs = Math.min(
          Math.max(error.retryAfterMs, MIN_RATE_LIMIT_PAUSE_MS),
          MAX_RATE_LIMIT_PAUSE_MS,
        );
        await this.pause(userId, 'rate_limited', pauseMs);
        return undefined;
      }
      if (error instanceof PlatformScopeRefusedError) {
        this.logger.warn(
          { platform_code: error.platformCode, pause_ms: SCOPE_REFUSED_PAUSE_MS },
          'The platform refused a user token the guilds.members.read scope: using the bot token for this user',
        );
        await this.pause(userId, 'scope_refused', SCOPE_REFUSED_PAUSE_MS);
        return undefined;
      }
      if (error instanceof PlatformRequestError) {
        this.logger.warn(
          { route: error.route, status: error.status, platform_code: error.platformCode },
          "Unexpected answer to the user's own member lookup: using the bot token",
        );
        return undefined;
      }
      throw error;
    }
  }

  private pause(userId: string, reason: Pause['reason'], ttlMs: number): Promise<void> {
    return this.cache.set(pauseKey(userId), { reason } satisfies Pause, ttlMs);
  }
}

const pauseKey = (userId: string): string => `own-member-paused:${userId}`;
