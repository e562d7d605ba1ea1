import { Injectable } from '@nestjs/common';
import type { GuildStateReport } from 'clients/bot-reporter/src/guild-state';
import { GuildStateCopy } from 'clients/bot-reporter/src/guild-state-copy';
import {
  BotGuildsRepository,
  type FeedTransaction,
  type GuildReport,
} from 'src/bot-guilds/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-guilds/bot-membership.service';
import type {
  GuildStateBatchDto,
  GuildStateDto,
  GuildStateReceiptDto,
  GuildStateReportDto,
} from 'src/bot-guilds/dto/guild-state.dto';
import type {
  GuildStateRow,
  HeldGuild,
  ShardStream,
} from 'src/bot-guilds/guild-state/guild-state.repository';
import { invalidReport, reportTime, shardOf } from 'src/bot-guilds/report-time';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { Metrics } from 'src/common/metrics/metrics';
import { Clock } from 'src/common/time/clock';

/** The payload field each report type carries (beside seq, type, guild_id, at and hash). */
const PAYLOAD: Readonly<Record<GuildStateReport['type'], readonly string[]>> = {
  guild_create: ['guild'],
  guild_update: ['guild'],
  guild_delete: ['unavailable'],
  role_upsert: ['role'],
  role_delete: ['role_id'],
  channel_upsert: ['channel'],
  channel_delete: ['channel_id'],
  thread_upsert: ['thread'],
  thread_delete: ['thread_id'],
  thread_list_sync: ['channel_ids', 'threads'],
  bot_member_update: ['member'],
};
const COMMON = new Set(['seq', 'type', 'guild_id', 'at', 'hash']);
/**
 * Guilds whose states a batch holds in memory at once: at the platform's maxima (about 223 KB of
 * JSON each) a few MB, however many guilds the batch names (docs/guild-state.md, costs).
 */
const GUILDS_AT_ONCE = 25;

/** One guild's reports of a batch, applied in order. */
interface GuildWork {
  /** The guild as held; undefined when nothing is (or the bot left it). */
  copy: GuildStateCopy | undefined;
  unavailable: boolean;
  /** The stream whose `guild_create` the held state comes from. */
  streamId: string;
  /** Whether the row must be written. */
  dirty: boolean;
  drifted: boolean;
  reportedAt: Date;
}

/**
 * The bot's reports of what it sees in its guilds (docs/guild-state.md): one stream per reporting
 * process and shard, applied in `seq` order, with duplicates ignored, gaps answered, stale streams
 * refused and drift detected against the bot's hash. Joins and leaves it implies go through the
 * membership feed's rule in the same transaction.
 */
@Injectable()
export class GuildStateFeedService {
  constructor(
    private readonly repository: BotGuildsRepository,
    private readonly membership: BotMembershipService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  async report(shardId: number, body: GuildStateBatchDto): Promise<GuildStateReceiptDto> {
    const now = this.clock.nowMs();
    // A process may report for weeks: its start only orders it against others.
    const startedAt = reportTime('stream.started_at', body.stream.started_at, now, {
      tooOld: 'accept',
    });
    const reports = this.checked(shardId, body.reports, now);
    let drifts = { detected: 0, healed: 0 };
    const receipt = await this.repository.inFeedTransaction(async (tx) => {
      const current = await tx.states.shardStream(shardId);
      const stream = this.streamFor(current, body.stream.id, startedAt);
      let duplicates = 0;
      let gap: GuildStateReceiptDto['gap'] = null;
      const accepted: { report: GuildStateReportDto; at: Date }[] = [];
      for (const entry of reports) {
        const expected = stream.seq + accepted.length + 1;
        if (entry.report.seq < expected) duplicates += 1;
        else if (entry.report.seq === expected) accepted.push(entry);
        else {
          gap = { expected_seq: expected, received_seq: entry.report.seq };
          break;
        }
      }
      const { applied, resync, drift } = await this.apply(tx, shardId, stream.streamId, accepted);
      drifts = drift;
      const seq = stream.seq + accepted.length;
      await tx.states.saveShardStream(
        shardId,
        // A gap stays open until the reports after it arrive in order.
        { ...stream, seq, gap: gap !== null || (stream.gap && accepted.length === 0) },
        this.clock.now(),
      );
      return { applied, duplicates, next_seq: seq + 1, gap, resync };
    });
    await this.membership.changed();
    // Counted once stored: a batch that rolled back changed nothing.
    this.metrics.guildStateDrifts(drifts.detected, drifts.healed);
    return receipt;
  }

  /**
   * The stream the batch belongs to: the shard's current one, or a newer one that replaces it (its
   * reports start again at 1). An older stream is refused.
   */
  private streamFor(
    current: ShardStream,
    streamId: string,
    startedAt: Date,
  ): { streamId: string; startedAt: Date; seq: number; gap: boolean } {
    if (current.streamId === streamId) {
      return {
        streamId,
        startedAt: current.startedAt ?? startedAt,
        seq: current.seq,
        gap: current.gap,
      };
    }
    if (current.streamId !== null && current.startedAt !== null) {
      const older =
        startedAt.getTime() < current.startedAt.getTime() ||
        (startedAt.getTime() === current.startedAt.getTime() && streamId < current.streamId);
      if (older) {
        throw new AppException(
          ErrorCode.VersionConflict,
          `Stream ${streamId} (started ${startedAt.toISOString()}) was replaced by stream ${current.streamId} (started ${current.startedAt.toISOString()}): this process's reports are out of date; a new process must start a new stream`,
        );
      }
    }
    return { streamId, startedAt, seq: 0, gap: false };
  }

  /** Each report's shape for its type, its guild's shard, its time; then sorted by seq. */
  private checked(
    shardId: number,
    reports: GuildStateReportDto[],
    now: number,
  ): { report: GuildStateReportDto; at: Date }[] {
    const { shardCount } = this.membership.view();
    if (shardCount !== null && shardId >= shardCount) {
      throw invalidReport(
        'shard_id',
        `shard ${shardId} is not one of the bot's ${shardCount} shards`,
      );
    }
    const seen = new Set<number>();
    const entries = reports.map((report, i) => {
      const field = `reports[${i}]`;
      const allowed = PAYLOAD[report.type];
      const stray = Object.keys(report).find(
        (key) =>
          !COMMON.has(key) &&
          !allowed.includes(key) &&
          report[key as keyof typeof report] !== undefined,
      );
      if (stray !== undefined) {
        throw invalidReport(
          `${field}.${stray}`,
          `${field}.${stray} does not belong to a ${report.type} report (it carries ${allowed.join(' and ')})`,
        );
      }
      if (seen.has(report.seq)) {
        throw invalidReport(
          `${field}.seq`,
          `${field}.seq repeats ${report.seq}: each report of a stream has its own seq`,
        );
      }
      seen.add(report.seq);
      if (shardCount !== null && shardOf(report.guild_id, shardCount) !== shardId) {
        throw invalidReport(
          `${field}.guild_id`,
          `guild ${report.guild_id} belongs to shard ${shardOf(report.guild_id, shardCount)} of ${shardCount}, not ${shardId}`,
        );
      }
      if (report.type === 'guild_create') this.checkWhole(field, report);
      return { report, at: reportTime(`${field}.at`, report.at, now) };
    });
    return entries.sort((a, b) => a.report.seq - b.report.seq);
  }

  /** A whole guild names itself, and each of its roles, channels and threads once. */
  private checkWhole(field: string, report: GuildStateReportDto): void {
    const guild = report.guild as GuildStateDto;
    if (guild.id !== report.guild_id) {
      throw invalidReport(`${field}.guild.id`, `${field}.guild.id must equal guild_id`);
    }
    for (const list of ['roles', 'channels', 'threads'] as const) {
      const seen = new Set<string>();
      for (const item of guild[list]) {
        if (seen.has(item.id)) {
          throw invalidReport(
            `${field}.guild.${list}`,
            `${field}.guild.${list} lists ${item.id} twice: each appears once`,
          );
        }
        seen.add(item.id);
      }
    }
  }

  /**
   * Applies the accepted reports, per guild in order, in the transaction, by the rules both sides
   * share (GuildStateCopy): joins and leaves they imply first, then the guilds' rows. Returns how
   * many changed something and the guilds whose full state is needed (unknown or drifted).
   */
  private async apply(
    tx: FeedTransaction,
    shardId: number,
    streamId: string,
    accepted: { report: GuildStateReportDto; at: Date }[],
  ): Promise<{ applied: number; resync: string[]; drift: { detected: number; healed: number } }> {
    // Each guild's reports in order; guilds apart from each other need no order.
    const byGuild = new Map<string, { report: GuildStateReport; at: Date }[]>();
    for (const { report, at } of accepted) {
      const list = byGuild.get(report.guild_id) ?? [];
      list.push({ report: report as unknown as GuildStateReport, at });
      byGuild.set(report.guild_id, list);
    }
    const guildIds = [...byGuild.keys()];
    let applied = 0;
    const resync: string[] = [];
    const drift = { detected: 0, healed: 0 };
    // A few guilds' states in memory at a time, however many guilds the batch names.
    for (let from = 0; from < guildIds.length; from += GUILDS_AT_ONCE) {
      const ids = guildIds.slice(from, from + GUILDS_AT_ONCE);
      const held = await tx.states.held(ids);
      const rows: GuildStateRow[] = [];
      const membership: GuildReport[] = [];
      for (const guildId of ids) {
        const before = held.get(guildId);
        const outcome = foldGuild(before, byGuild.get(guildId) ?? [], streamId);
        applied += outcome.applied;
        const wasDrifted = before?.drifted ?? false;
        if (!wasDrifted && outcome.work.drifted) drift.detected += 1;
        if (wasDrifted && !outcome.work.drifted && outcome.work.copy) drift.healed += 1;
        if (outcome.resync) resync.push(guildId);
        if (outcome.membership) membership.push({ guildId, ...outcome.membership });
        const { work } = outcome;
        const copy = work.copy;
        if (work.dirty && copy) {
          rows.push({
            guildId,
            shardId,
            streamId: work.streamId,
            held: {
              state: copy.state(),
              deletedIds: copy.deletedIds(),
              unavailable: work.unavailable,
            },
            hash: copy.hash(),
            drifted: work.drifted,
            reportedAt: work.reportedAt,
          });
        }
      }
      // Joins (guild_create) and leaves (guild_delete) by the membership feed's time rule; a
      // leave drops the guild's state in the same transaction.
      await tx.applyReports(shardId, membership);
      await tx.states.save(rows);
      // A guild_create older than a leave the feed holds does not bring the guild back.
      await tx.states.dropNotPresent(rows.map((row) => row.guildId));
    }
    return { applied, resync, drift };
  }
}

/**
 * One guild's reports of a batch, in order, folded onto what is held of it: what changed, whether
 * its full state is needed (unknown, drifted, or from an older stream), and the join or leave they
 * imply (the newest).
 */
function foldGuild(
  row: { held: HeldGuild; streamId: string } | undefined,
  reports: { report: GuildStateReport; at: Date }[],
  streamId: string,
): {
  work: GuildWork;
  applied: number;
  resync: boolean;
  membership: { present: boolean; at: Date } | undefined;
} {
  const work = workOf(row, streamId, reports[0].at);
  let applied = 0;
  let resync = false;
  let membership: { present: boolean; at: Date } | undefined;
  // Only the newest hash is compared: the bot's copy after the last of these reports.
  const lastHashed = reports.findLastIndex(({ report }) => report.hash !== undefined);
  reports.forEach(({ report, at }, i) => {
    work.reportedAt = at;
    if (report.type === 'guild_create') {
      work.copy = new GuildStateCopy(report.guild);
      work.unavailable = false;
      work.streamId = streamId;
      work.drifted = false;
      work.dirty = true;
      resync = false;
      membership = { present: true, at };
      applied += 1;
    } else if (report.type === 'guild_delete' && !report.unavailable) {
      work.copy = undefined;
      membership = { present: false, at };
      applied += 1;
      return;
    } else if (!work.copy) {
      resync = true;
      return;
    } else if (report.type === 'guild_delete') {
      if (!work.unavailable) {
        work.unavailable = true;
        work.dirty = true;
        applied += 1;
      }
    } else {
      const before = work.copy.hash();
      work.copy.apply(report);
      if (work.copy.hash() !== before) {
        work.dirty = true;
        applied += 1;
      }
      // A state from an older stream (before a restart) may have missed changes: the new
      // process's guild_create is needed before it is used again.
      if (work.streamId !== streamId) resync = true;
    }
    if (i === lastHashed && report.hash !== work.copy.hash()) {
      work.drifted = true;
      work.dirty = true;
      resync = true;
    }
  });
  return { work, applied, resync, membership };
}

/** What a batch starts from for one guild: its row, or nothing. */
function workOf(
  row: { held: HeldGuild; streamId: string } | undefined,
  streamId: string,
  at: Date,
): GuildWork {
  return {
    copy: row ? new GuildStateCopy(row.held.state, row.held.deletedIds) : undefined,
    unavailable: row?.held.unavailable ?? false,
    streamId: row?.streamId ?? streamId,
    dirty: false,
    drifted: false,
    reportedAt: at,
  };
}
