import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { BotMembershipService, type FeedFollower } from 'src/bot-reports/bot-membership.service';
import type { ShardState } from 'src/bot-reports/bot-guilds.repository';
import {
  GUILD_STATE_BEHIND_REASONS,
  type GuildStateBehindReason,
  type GuildStateShardDto,
  type GuildStateStatusDto,
} from 'src/bot-reports/guild-state/dto/guild-state.dto';
import {
  GuildStateRepository,
  type GuildStateMeta,
} from 'src/bot-reports/guild-state/guild-state.repository';
import { platformShapes, type FedGuild } from 'src/bot-reports/guild-state/platform-shapes';
import { SingleFlight } from 'src/common/async/single-flight';
import { Clock } from 'src/common/time/clock';
import { AppConfig } from 'src/config/app-config';
import { compareSnowflakes } from 'src/common/validation/snowflake';

/** Rows read per query while catching up (a restart reads every row's facts once). */
const SYNC_PAGE = 10_000;
/** Guilds listed by `GET /internal/guild-state`. */
const LISTED_BEHIND = 100;

/** A guild's state as this instance holds it: the row's version and its platform shapes. */
export interface LiveGuildState extends FedGuild {
  version: number;
  /** The state's JSON length: what the LRU counts. */
  bytes: number;
}

/**
 * The guild-state feed as every instance reads it (docs/guild-state.md). Each instance keeps the
 * facts of every row (stream, drift, outage, version: about 200 bytes a guild, docs/guild-state.md) and follows their
 * changes with the membership feed's reads (at once through Redis, at the latest every 5 s). States
 * themselves are loaded on first use and kept in an LRU bounded by bytes (GUILD_STATE_CACHE_MB); a
 * newer version is loaded again.
 */
@Injectable()
export class GuildStateService implements FeedFollower {
  private readonly metas = new Map<string, GuildStateMeta>();
  private version = 0;
  private readonly enabled: boolean;
  private readonly maxAgeMs: number;
  private readonly states: LRUCache<string, LiveGuildState>;
  private readonly loads = new SingleFlight<LiveGuildState | undefined>();

  constructor(
    private readonly repository: GuildStateRepository,
    private readonly membership: BotMembershipService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.enabled = config.platform.guildStateFeed;
    this.maxAgeMs = config.platform.guildStateMaxAgeSeconds * 1000;
    this.states = new LRUCache<string, LiveGuildState>({
      maxSize: config.platform.guildStateCacheBytes,
      // The row's JSON length: an estimate of what its objects hold.
      sizeCalculation: (value) => Math.max(1, value.bytes),
    });
    membership.follow(this);
  }

  /**
   * The guild as the bot's feed holds it, while that is live; undefined otherwise (the caller
   * reads the platform). Costs no platform call, and no database query once loaded.
   */
  async live(guildId: string): Promise<LiveGuildState | undefined> {
    if (!this.enabled || this.behind(guildId) !== null) return undefined;
    const meta = this.metas.get(guildId);
    if (!meta) return undefined;
    const held = this.states.get(guildId);
    if (held && held.version >= meta.version) return held;
    return this.loads.run(guildId, () => this.load(guildId));
  }

  /**
   * Why the guild is not read from the feed, or null when it is; `absent` for a guild the
   * membership feed does not hold (one truth: no state without membership).
   */
  behind(guildId: string): GuildStateBehindReason | 'absent' | null {
    if (!this.membership.holds(guildId)) return 'absent';
    const meta = this.metas.get(guildId);
    if (!meta) return 'missing';
    if (meta.drifted) return 'drifted';
    if (meta.unavailable) return 'unavailable';
    const shard = this.membership.shard(meta.shardId);
    if (!shard) return 'old_stream';
    if (shard.streamId === meta.streamId) {
      if (shard.streamGap) return 'gap';
      // The bound on how old a state the routes show: its shard's last report, at most this old.
      if (this.clock.nowMs() - shard.reportedAt.getTime() > this.maxAgeMs) return 'stale';
      return null;
    }
    // A restart: the replaced stream's states serve until each is sent again, as long as a state
    // of a shard gone quiet would (docs/guild-state.md, "A restart").
    if (this.inRestartWindow(shard, meta.streamId)) return shard.streamGap ? 'gap' : null;
    return 'old_stream';
  }

  /** Whether a state of `streamId` is one the shard's current stream has yet to replace, in time. */
  private inRestartWindow(shard: ShardState, streamId: string): boolean {
    return (
      shard.previousStreamId === streamId &&
      shard.previousStreamReportedAt !== null &&
      this.clock.nowMs() - shard.previousStreamReportedAt.getTime() <= this.maxAgeMs
    );
  }

  status(): GuildStateStatusDto {
    const counts = Object.fromEntries(GUILD_STATE_BEHIND_REASONS.map((r) => [r, 0])) as Record<
      GuildStateBehindReason,
      number
    >;
    const listed: { guild_id: string; reason: GuildStateBehindReason }[] = [];
    let live = 0;
    const restarting = new Map<number, number>();
    const present = this.membership.presentGuilds();
    for (const guildId of present) {
      const reason = this.behind(guildId);
      if (reason === null) {
        live += 1;
        const meta = this.metas.get(guildId);
        if (meta && this.membership.shard(meta.shardId)?.streamId !== meta.streamId) {
          restarting.set(meta.shardId, (restarting.get(meta.shardId) ?? 0) + 1);
        }
        continue;
      }
      if (reason === 'absent') continue;
      counts[reason] += 1;
      listed.push({ guild_id: guildId, reason });
    }
    listed.sort((a, b) => compareSnowflakes(a.guild_id, b.guild_id));
    return {
      membership_live: this.membership.isLive(),
      max_age: this.maxAgeMs / 1000,
      guilds: present.size,
      live,
      behind: counts,
      guilds_behind: listed.slice(0, LISTED_BEHIND),
      shards: [...this.membership.view().shards.values()]
        .sort((a, b) => a.shardId - b.shardId)
        .map((shard) => this.shardStatus(shard, restarting.get(shard.shardId) ?? 0)),
    };
  }

  private shardStatus(shard: ShardState, restartGuilds: number): GuildStateShardDto {
    const iso = (date: Date | null): string | null => date?.toISOString() ?? null;
    const lastOfReplaced = shard.previousStreamReportedAt;
    return {
      shard_id: shard.shardId,
      stream_id: shard.streamId,
      gap: shard.streamGap,
      replaced_stream_id: shard.previousStreamId,
      replaced_at: iso(shard.streamReplacedAt),
      restart_guilds: restartGuilds,
      restart_until:
        restartGuilds > 0 && lastOfReplaced
          ? new Date(lastOfReplaced.getTime() + this.maxAgeMs).toISOString()
          : null,
      snapshot_at: iso(shard.snapshotAt),
      replaced_snapshot_at: iso(shard.previousSnapshotAt),
    };
  }

  /**
   * A guild's membership row changed: a leave drops what is held of it; a join or a snapshot (a
   * leave and a join may both have happened since the last read, and a leave deletes the state's
   * row) makes the next use read its row again.
   */
  membershipChanged(guildId: string, present: boolean): void {
    if (!present) this.metas.delete(guildId);
    this.states.delete(guildId);
  }

  async sync(): Promise<void> {
    for (;;) {
      const rows = await this.repository.changesAfter(this.version, SYNC_PAGE);
      for (const row of rows) {
        this.metas.set(row.guildId, row);
        this.version = Math.max(this.version, row.version);
      }
      if (rows.length < SYNC_PAGE) break;
    }
  }

  private async load(guildId: string): Promise<LiveGuildState | undefined> {
    const row = await this.repository.load(guildId);
    if (!row) {
      this.metas.delete(guildId);
      return undefined;
    }
    const known = this.metas.get(guildId);
    // A row newer than the facts this instance has read: its facts decide.
    if (!known || known.version < row.meta.version) this.metas.set(guildId, row.meta);
    if (this.behind(guildId) !== null) return undefined;
    const live: LiveGuildState = {
      version: row.meta.version,
      bytes: JSON.stringify(row.state).length,
      ...platformShapes(row.state),
    };
    this.states.set(guildId, live);
    return live;
  }
}
