import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Clock } from 'src/common/time/clock';
import { Metrics } from 'src/common/metrics/metrics';
import { AppConfig } from 'src/config/app-config';
import {
  invalidReport,
  MAX_REPORT_AGE_MS,
  notAhead,
  reportTime,
  shardOf,
} from 'src/bot-reports/report-time';
import { BotGuildsRepository, type GuildReport } from 'src/bot-reports/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import type {
  FeedStatusDto,
  GuildEventsDto,
  GuildEventsReceiptDto,
  GuildSnapshotDto,
  SnapshotReceiptDto,
} from 'src/bot-reports/dto/bot-guilds.dto';

/**
 * A shard that has not reported for this long loses its snapshot and its guilds: 30 times the
 * default BOT_FEED_STALE_AFTER, so only a shard id no process uses any more (or a bot gone for an
 * hour) is affected.
 */
export const SHARD_EXPIRY_MS = 3_600_000;

/** The bot's own reports: refused at once (429) past the instance's queue of feed writes. */
const BOT_REPORT = { fromBot: true };

/**
 * The bot's reports of where it is (docs/bot-membership.md): snapshots per shard and joins and
 * leaves, applied in the order the bot saw them, whatever order they arrive in.
 */
@Injectable()
export class BotGuildsFeedService {
  private readonly logger = new Logger(BotGuildsFeedService.name);
  private readonly staleAfterSeconds: number;

  constructor(
    private readonly repository: BotGuildsRepository,
    private readonly membership: BotMembershipService,
    private readonly clock: Clock,
    config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.staleAfterSeconds = config.platform.botFeedStaleAfterSeconds;
    // Read when scraped (docs/operations.md, "Metrics"): the feed's health without a request.
    metrics.gauge(
      'bms_membership_feed_live',
      "1 while the bot's membership feed is live (every shard reported a whole snapshot lately), else 0",
      () => (this.membership.isLive() ? 1 : 0),
    );
    metrics.labelledGauge(
      'bms_membership_feed_shards',
      "The bot's shards the membership feed knows, by whether their last snapshot arrived whole",
      'snapshot',
      () => {
        const counts = { complete: 0, incomplete: 0 };
        for (const shard of this.membership.view().shards.values()) {
          counts[shard.snapshotAt ? 'complete' : 'incomplete'] += 1;
        }
        return counts;
      },
    );
    metrics.labelledGauge(
      'bms_membership_feed_report_age_seconds',
      "Seconds since each of the bot's shards last reported to the membership feed",
      'shard',
      () => {
        const now = this.clock.nowMs();
        const ages: Record<string, number> = {};
        for (const [shardId, shard] of this.membership.view().shards) {
          ages[String(shardId)] = Math.max(0, (now - shard.reportedAt.getTime()) / 1000);
        }
        return ages;
      },
    );
  }

  /**
   * One part of a shard's snapshot. Once every id of it has arrived, the shard's guilds it does
   * not list are left (unless a newer join says otherwise).
   */
  async snapshot(shardId: number, body: GuildSnapshotDto): Promise<SnapshotReceiptDto> {
    const at = reportTime('snapshot_at', body.snapshot_at, this.clock.nowMs());
    if (shardId >= body.shard_count) {
      throw invalidReport('shard_count', `shard_count must be above the shard id (${shardId})`);
    }
    const ids = [...new Set(body.guild_ids)];
    if (ids.length > body.total) {
      throw invalidReport(
        'guild_ids',
        `guild_ids holds ${ids.length} ids, more than total (${body.total})`,
      );
    }
    const elsewhere = ids.find((id) => shardOf(id, body.shard_count) !== shardId);
    if (elsewhere !== undefined) {
      throw invalidReport(
        'guild_ids',
        `guild ${elsewhere} belongs to shard ${shardOf(elsewhere, body.shard_count)} of ${body.shard_count}, not ${shardId}`,
      );
    }
    const received = await this.repository.inFeedTransaction(async (tx) => {
      await tx.listInSnapshot(shardId, at, ids);
      const count = await tx.countListed(shardId, at);
      if (count > body.total) {
        throw invalidReport(
          'total',
          `the parts of this snapshot hold ${count} ids, more than total (${body.total}); send the whole snapshot again with a new snapshot_at`,
        );
      }
      const complete = count === body.total;
      if (complete) {
        const orderAt = notAhead(at, this.clock.nowMs());
        await tx.completeSnapshot(shardId, at, orderAt, body.shard_count);
      }
      const { replacedSnapshotAt } = await tx.shardReported(
        shardId,
        this.clock.now(),
        complete ? { at, shardCount: body.shard_count } : undefined,
      );
      return { count, replacedSnapshotAt };
    }, BOT_REPORT);
    await this.membership.changed();
    if (received.replacedSnapshotAt) {
      // Every new gateway session replaces its shard's snapshot; two processes reporting one shard
      // replace each other's (docs/bot-membership.md, "Takeovers").
      this.logger.warn(
        {
          shard_id: shardId,
          snapshot_at: at.toISOString(),
          replaced_snapshot_at: received.replacedSnapshotAt.toISOString(),
          guild_state_stream_id: this.membership.shard(shardId)?.streamId ?? null,
        },
        `Membership feed: shard ${shardId}'s snapshot of ${at.toISOString()} replaced the one of ${received.replacedSnapshotAt.toISOString()} (a new gateway session, or another process reporting the shard)`,
      );
    }
    return {
      shard_id: shardId,
      snapshot_at: at.toISOString(),
      received: received.count,
      total: body.total,
      complete: received.count === body.total,
    };
  }

  /** Joins and leaves; each is applied unless what is held is newer. */
  async events(shardId: number, body: GuildEventsDto): Promise<GuildEventsReceiptDto> {
    const { shardCount } = this.membership.view();
    if (shardCount !== null && shardId >= shardCount) {
      throw invalidReport(
        'shard_id',
        `shard ${shardId} is not one of the bot's ${shardCount} shards`,
      );
    }
    const newest = new Map<string, GuildReport>();
    body.events.forEach((event, i) => {
      if (shardCount !== null && shardOf(event.guild_id, shardCount) !== shardId) {
        throw invalidReport(
          `events[${i}].guild_id`,
          `guild ${event.guild_id} belongs to shard ${shardOf(event.guild_id, shardCount)} of ${shardCount}, not ${shardId}`,
        );
      }
      const now = this.clock.nowMs();
      const reported = reportTime(`events[${i}].at`, event.at, now, { tooOld: 'ignore' });
      // Older than anything remembered: it could only undo a newer leave, so it is ignored.
      if (reported === null) return;
      // A time ahead of the service's clock counts as now: it cannot outrank what the bot reports
      // next (a leave a minute later by the service's clock is applied, not ignored).
      const at = notAhead(reported, now);
      const held = newest.get(event.guild_id);
      // Of two reports of one guild in a batch, the later one wins (the batch order on a tie).
      if (!held || held.at <= at) {
        newest.set(event.guild_id, { guildId: event.guild_id, present: event.type === 'join', at });
      }
    });
    const applied = await this.repository.inFeedTransaction(async (tx) => {
      const ids = await tx.applyReports(shardId, [...newest.values()]);
      await tx.shardReported(shardId, this.clock.now());
      return ids.length;
    }, BOT_REPORT);
    await this.membership.changed();
    this.metrics.membershipFeedEvents(applied, body.events.length - applied);
    return { applied, ignored: body.events.length - applied };
  }

  async status(): Promise<FeedStatusDto> {
    const view = this.membership.view();
    const perShard = await this.repository.presentGuildsPerShard();
    const now = this.clock.nowMs();
    const ids = new Set([...view.shards.keys(), ...perShard.keys()]);
    for (let id = 0; id < (view.shardCount ?? 0); id++) ids.add(id);
    const shards = [...ids]
      .sort((a, b) => a - b)
      .map((shardId) => {
        const shard = view.shards.get(shardId);
        return {
          shard_id: shardId,
          guilds: perShard.get(shardId) ?? 0,
          snapshot_at: shard?.snapshotAt?.toISOString() ?? null,
          reported_at: shard?.reportedAt.toISOString() ?? null,
          live:
            !!shard?.snapshotAt && now - shard.reportedAt.getTime() < this.staleAfterSeconds * 1000,
        };
      });
    return {
      live: view.live,
      shard_count: view.shardCount,
      stale_after: this.staleAfterSeconds,
      guilds: [...perShard.values()].reduce((sum, count) => sum + count, 0),
      shards,
    };
  }

  /**
   * Hourly: shards silent for SHARD_EXPIRY_MS lose their snapshot and their guilds (a stray shard
   * id reported once, an old layout's shards), and left guilds older than any report still
   * accepted are forgotten.
   */
  @Interval('purge-left-guilds', 3_600_000)
  async purge(): Promise<void> {
    try {
      await this.expireSilentShards();
      await this.repository.purgeLeftBefore(new Date(this.clock.nowMs() - MAX_REPORT_AGE_MS));
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'Could not purge left guilds');
    }
  }

  /** Shards silent for SHARD_EXPIRY_MS lose their snapshot and guilds; returns their ids. */
  async expireSilentShards(): Promise<number[]> {
    const now = this.clock.nowMs();
    const expired = await this.repository.inFeedTransaction((tx) =>
      tx.expireShardsSilentSince(new Date(now - SHARD_EXPIRY_MS), new Date(now)),
    );
    if (expired.length === 0) return expired;
    this.logger.log(
      { shards: expired, silent_for_s: SHARD_EXPIRY_MS / 1000 },
      'Membership feed: shards silent for too long no longer count; their guilds are left until they report again',
    );
    await this.membership.changed();
    return expired;
  }
}
