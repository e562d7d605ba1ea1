import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { SingleFlight } from 'src/common/async/single-flight';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { RedisBroadcasts, type Broadcast } from 'src/common/redis/redis-broadcast';
import { Clock } from 'src/common/time/clock';
import { AppConfig } from 'src/config/app-config';
import { BotGuildsRepository, type ShardState } from 'src/bot-reports/bot-guilds.repository';
import { PLATFORM_CACHE } from 'src/platform/platform-cache';
import { PlatformService } from 'src/platform/platform.service';

/** Changes are read at least this often, whatever reaches this instance through Redis. */
const POLL_MS = 5_000;
/** Rows read per query while catching up (a restart reads every row once). */
const SYNC_PAGE = 10_000;
/** Without the feed: a guild the platform said the bot is in is believed this long. */
const FALLBACK_FOUND_TTL_MS = 60_000;
/**
 * Without the feed: "not in it" is believed this long, by guild lists and by requests for the
 * guild alike, so an invented id costs one platform call however often and by whomever it is
 * sent. A guild the bot has just been invited to is found once this has passed, or at once by a
 * guild list read with `refresh=true` (docs/bot-membership.md).
 */
const FALLBACK_ABSENT_TTL_MS = 10_000;
/** Platform calls one guild list may make to settle which of its guilds the bot is in. */
const MAX_LIST_CALLS = 10;

/** A fallback answer: whether the platform said the bot is in the guild. */
interface Checked {
  in: boolean;
}

/**
 * What follows the feed's changes on every instance beside the membership set (the guild-state
 * feed): told of each guild whose membership row changed (a leave, a join, a snapshot: what it
 * holds of the guild may be gone), and asked to read its own changes after each read.
 */
export interface FeedFollower {
  membershipChanged(guildId: string, present: boolean): void;
  sync(initial: boolean): Promise<void>;
}

/** What the feed holds of every shard, as this instance last read it. */
export interface FeedView {
  live: boolean;
  shardCount: number | null;
  shards: ReadonlyMap<number, ShardState>;
}

/**
 * Which guilds the bot is in (docs/bot-membership.md). The bot's processes report their guilds
 * (the membership feed); every instance holds that set in memory, follows its changes in the
 * database (at once through Redis, at the latest every POLL_MS) and answers from it while the feed
 * is live. A guild the set lacks while the feed is not live is checked with the one platform call
 * that never counts as invalid, coalesced, remembered briefly and charged to the caller.
 */
@Injectable()
export class BotMembershipService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(BotMembershipService.name);
  private readonly present = new Set<string>();
  private readonly shards = new Map<number, ShardState>();
  private guildVersion = 0;
  private shardVersion = 0;
  private shardCount: number | null = null;
  /** Epoch ms until which every shard of the feed has reported recently enough. */
  private liveUntil = 0;
  private readonly staleAfterMs: number;
  private channel: Broadcast<1> | null = null;
  private closing = false;
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  private poller: NodeJS.Timeout | null = null;
  private readonly checks = new SingleFlight<boolean>();
  private readonly followers: FeedFollower[] = [];

  constructor(
    private readonly repository: BotGuildsRepository,
    private readonly platform: PlatformService,
    @Inject(PLATFORM_CACHE) private readonly cache: SharedCache,
    private readonly limiter: RateLimiter,
    private readonly broadcasts: RedisBroadcasts,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.staleAfterMs = config.platform.botFeedStaleAfterSeconds * 1000;
  }

  async onModuleInit(): Promise<void> {
    await this.sync();
    this.poller = setInterval(() => void this.syncQuietly(), POLL_MS);
    this.poller.unref();
    this.channel = this.broadcasts.open<1>('bot-guilds:changed', {
      what: 'membership changes',
      otherwise: `they are read every ${POLL_MS / 1000} s`,
      onMessage: () => void this.syncQuietly(),
    });
  }

  onApplicationShutdown(): void {
    this.closing = true;
    if (this.poller) clearInterval(this.poller);
  }

  /** `follower` reads its changes with every read of the feed's (registered before the first). */
  follow(follower: FeedFollower): void {
    this.followers.push(follower);
  }

  /** Whether the feed holds the guild as present (whether or not the feed is live). */
  holds(guildId: string): boolean {
    return this.present.has(guildId);
  }

  /** What the feed holds of one shard, as this instance last read it. */
  shard(shardId: number): ShardState | undefined {
    return this.shards.get(shardId);
  }

  /** Guilds the feed holds as present. */
  presentGuilds(): ReadonlySet<string> {
    return this.present;
  }

  /** The feed as this instance holds it. */
  view(): FeedView {
    return { live: this.isLive(), shardCount: this.shardCount, shards: this.shards };
  }

  /** Whether the feed is trusted: every shard has sent a complete snapshot and reported lately. */
  isLive(): boolean {
    return this.clock.nowMs() < this.liveUntil;
  }

  /**
   * Whether the bot is in the guild. What memory does not settle (an answer of the last
   * FALLBACK_FOUND_TTL_MS or FALLBACK_ABSENT_TTL_MS included) costs one platform call that the
   * platform never counts as invalid, shared by concurrent requests and charged to `caller`'s
   * `guild-check` budget (429 when it is spent).
   */
  async isBotIn(guildId: string, caller: string | undefined): Promise<boolean> {
    if (this.present.has(guildId)) return true;
    if (this.isLive()) return false;
    // Remembered by this instance, or learned by another (the shared copy outlives this one's).
    const checked = await this.cache.peek<Checked>(checkKey(guildId));
    if (checked) return checked.in;
    // Each caller pays for the check, even one that shares another's call.
    if (caller !== undefined) await this.charge(caller);
    return this.checks.run(guildId, async () => {
      const found = await this.platform.botMembershipOf([guildId], 1);
      const isIn = found.found.has(guildId);
      await this.remember(guildId, isIn);
      return isIn;
    });
  }

  /**
   * Which of `guildIds` (a user's guilds) the bot is in. Without a live feed, what is not
   * remembered (everything, on `refresh`) is read from the bot's guild list in the ranges that
   * hold those ids: at most MAX_LIST_CALLS calls, each charged to `caller`'s `guild-check` budget.
   * Ids left unsettled (calls or budget spent) count as without the bot and are not remembered.
   */
  async botIn(
    guildIds: readonly string[],
    refresh: boolean,
    caller: string,
  ): Promise<ReadonlySet<string>> {
    const inGuilds = new Set(guildIds.filter((id) => this.present.has(id)));
    if (this.isLive()) return inGuilds;
    const unknown: string[] = [];
    await Promise.all(
      guildIds
        .filter((id) => !inGuilds.has(id))
        .map(async (id) => {
          const checked = refresh ? undefined : await this.cache.peek<Checked>(checkKey(id));
          if (checked === undefined) unknown.push(id);
          else if (checked.in) inGuilds.add(id);
        }),
    );
    if (unknown.length === 0) return inGuilds;
    const { found, settled } = await this.platform.botMembershipOf(unknown, MAX_LIST_CALLS, () =>
      this.mayCharge(caller),
    );
    await Promise.all(
      [...settled].map((id) => {
        if (found.has(id)) inGuilds.add(id);
        return this.remember(id, found.has(id));
      }),
    );
    return inGuilds;
  }

  /**
   * The platform refused a guild (403 or 404): the bot is not in it, whatever was held. A guild
   * the feed holds is marked left, for every instance.
   */
  async refusedByPlatform(guildId: string): Promise<void> {
    await this.remember(guildId, false);
    if (!this.present.has(guildId)) return;
    const changed = await this.repository.inFeedTransaction((tx) =>
      tx.leaveSeenByPlatform(guildId, this.clock.now()),
    );
    if (changed) await this.changed();
  }

  /** A write to the feed has committed: read it here, and tell the other instances. */
  async changed(): Promise<void> {
    await this.sync();
    await this.channel?.publish(1);
  }

  /** Reads what changed since the last read; concurrent calls share a read, and one more follows. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          await this.readChanges();
        } while (this.syncAgain);
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  private async syncQuietly(): Promise<void> {
    try {
      await this.sync();
    } catch (error) {
      if (this.closing) return;
      this.logger.warn({ reason: (error as Error).message }, 'Could not read membership changes');
    }
  }

  private async readChanges(): Promise<void> {
    const initial = this.guildVersion === 0;
    for (;;) {
      const rows = await this.repository.guildChangesAfter(this.guildVersion, SYNC_PAGE);
      const joined: string[] = [];
      for (const row of rows) {
        if (row.present) {
          if (!this.present.has(row.guildId) && !initial) joined.push(row.guildId);
          this.present.add(row.guildId);
        } else {
          this.present.delete(row.guildId);
        }
        for (const follower of this.followers) follower.membershipChanged(row.guildId, row.present);
        this.guildVersion = row.version;
      }
      // Guilds the bot has joined: a refusal remembered from before must not linger.
      await Promise.all(joined.map((guildId) => this.platform.forgetRefusal(guildId)));
      if (rows.length < SYNC_PAGE) break;
    }
    for (const follower of this.followers) await follower.sync(initial);
    const shards = await this.repository.shardChangesAfter(this.shardVersion);
    for (const shard of shards) {
      // An expired shard (its snapshot cleared) counts in no layout until it reports again.
      this.shards.set(shard.shardId, shard);
      this.shardVersion = Math.max(this.shardVersion, shard.version);
    }
    this.updateLiveness();
  }

  /**
   * The feed is live while one layout of shards (a `shard_count`) has a complete snapshot from
   * each of its shards, all with that count, each reported within `BOT_FEED_STALE_AFTER`; of
   * several such layouts, the one with the newest snapshot. A snapshot for a shard outside the
   * layout (a stray `shard_count`) therefore does not switch a live feed off, while a resharding
   * under way (the old layout's shards taken over by the new one) does until the new one is whole.
   * Without a live layout, `shardCount` is the newest snapshot's (docs/bot-membership.md).
   */
  private updateLiveness(): void {
    const now = this.clock.nowMs();
    let newest: ShardState | undefined;
    const layouts = new Set<number>();
    for (const shard of this.shards.values()) {
      if (!shard.snapshotAt || shard.shardCount === null) continue;
      layouts.add(shard.shardCount);
      if (!newest?.snapshotAt || shard.snapshotAt > newest.snapshotAt) newest = shard;
    }
    let live: { count: number; until: number; snapshotAt: number } | null = null;
    for (const count of layouts) {
      let until = Number.POSITIVE_INFINITY;
      let snapshotAt = Number.NEGATIVE_INFINITY;
      for (let id = 0; id < count && until > now; id++) {
        const shard = this.shards.get(id);
        if (!shard?.snapshotAt || shard.shardCount !== count) until = 0;
        else {
          until = Math.min(until, shard.reportedAt.getTime() + this.staleAfterMs);
          snapshotAt = Math.max(snapshotAt, shard.snapshotAt.getTime());
        }
      }
      if (until > now && (!live || snapshotAt > live.snapshotAt))
        live = { count, until, snapshotAt };
    }
    this.shardCount = live?.count ?? newest?.shardCount ?? null;
    this.liveUntil = live?.until ?? 0;
  }

  /** Charges one check to `caller`; false when their budget is spent. */
  private async mayCharge(caller: string): Promise<boolean> {
    if (!this.limiter.enabled) return true;
    return !(await this.limiter.count('guild-check', caller)).blocked;
  }

  private async charge(caller: string): Promise<void> {
    if (!this.limiter.enabled) return;
    const state = await this.limiter.count('guild-check', caller);
    if (state.blocked) throw this.limiter.refusal(state);
  }

  private async remember(guildId: string, isIn: boolean): Promise<void> {
    const checked: Checked = { in: isIn };
    await this.cache.set(
      checkKey(guildId),
      checked,
      isIn ? FALLBACK_FOUND_TTL_MS : FALLBACK_ABSENT_TTL_MS,
    );
    if (isIn) await this.platform.forgetRefusal(guildId);
  }
}

const checkKey = (guildId: string): string => `bot-in:${guildId}`;
