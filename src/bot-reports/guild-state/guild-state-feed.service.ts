import { Injectable, Logger } from '@nestjs/common';
import type { GuildState, GuildStateReport } from 'clients/bot-reporter/src/guild-state';
import {
  capExceeded,
  foldGuild,
  heldGroups,
  prepareWhole,
  type Prepared,
} from 'src/bot-reports/guild-state/guild-state-fold';
import {
  BotGuildsRepository,
  type FeedTransaction,
  type GuildReport,
} from 'src/bot-reports/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import type {
  GuildStateBatchDto,
  GuildStateDto,
  GuildStateReceiptDto,
  GuildStateReportDto,
} from 'src/bot-reports/guild-state/dto/guild-state.dto';
import {
  GuildStateRepository,
  type AdoptedRow,
  type GuildStateFacts,
  type GuildStateRow,
  type HeldGuild,
  type ReplacedStream,
  type ShardStream,
} from 'src/bot-reports/guild-state/guild-state.repository';
import { invalidReport, notAhead, reportTime, shardOf } from 'src/bot-reports/report-time';
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
 * The bot's reports of what it sees in its guilds (docs/guild-state.md): one stream per reporting
 * process and shard, applied in `seq` order, with duplicates ignored, gaps answered, stale streams
 * refused and drift detected against the bot's hash. Joins and leaves it implies go through the
 * membership feed's rule in the same transaction.
 */
@Injectable()
export class GuildStateFeedService {
  private readonly logger = new Logger(GuildStateFeedService.name);

  constructor(
    private readonly repository: BotGuildsRepository,
    private readonly membership: BotMembershipService,
    private readonly states: GuildStateRepository,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  async report(shardId: number, body: GuildStateBatchDto): Promise<GuildStateReceiptDto> {
    const now = this.clock.nowMs();
    // A process may report for weeks: its start only orders it against others. A start ahead of
    // the service's clock counts as now, so that the process started after it is newer.
    const startedAt = notAhead(
      reportTime('stream.started_at', body.stream.started_at, now, { tooOld: 'accept' }),
      now,
    );
    const reports = this.checked(shardId, body.reports, now);
    // Before the transaction, answering other requests between guilds: the batch's whole states,
    // serialised only where they differ from what is stored (checked again in the transaction).
    const stored = await this.states.storedHashes(
      reports
        .filter(({ report }) => report.type === 'guild_create')
        .map(({ report }) => report.guild_id),
    );
    const prepared = await prepareWhole(reports, stored);
    let drifts = { detected: 0, healed: 0 };
    let takeover: ReplacedStream | undefined;
    const receipt = await this.repository.inFeedTransaction(
      async (tx) => {
        const current = await tx.states.shardStream(shardId);
        const stream = this.streamFor(shardId, current, body.stream.id, startedAt);
        takeover = stream.replaced;
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
        const { applied, resync, drift } = await this.apply(
          tx,
          { shardId, streamId: stream.streamId, prepared },
          accepted,
        );
        drifts = drift;
        const seq = stream.seq + accepted.length;
        await tx.states.saveShardStream(
          shardId,
          // A gap stays open until the reports after it arrive in order.
          { ...stream, seq, gap: gap !== null || (stream.gap && accepted.length === 0) },
          this.clock.now(),
          stream.replaced,
        );
        return { applied, duplicates, next_seq: seq + 1, gap, resync };
      },
      { fromBot: true },
    );
    await this.membership.changed();
    if (takeover) this.tookOver(shardId, body.stream.id, startedAt, takeover, now);
    // Counted once stored: a batch that rolled back changed nothing.
    this.metrics.guildStateDrifts(drifts.detected, drifts.healed);
    return receipt;
  }

  /**
   * The stream the batch belongs to: the shard's current one, or a newer one that replaces it (its
   * reports start again at 1; `replaced` names the stream it takes the shard over from). An older
   * stream is refused.
   */
  private streamFor(
    shardId: number,
    current: ShardStream,
    streamId: string,
    startedAt: Date,
  ): {
    streamId: string;
    startedAt: Date;
    seq: number;
    gap: boolean;
    replaced?: ReplacedStream;
  } {
    if (current.streamId === streamId) {
      return {
        streamId,
        startedAt: current.startedAt ?? startedAt,
        seq: current.seq,
        gap: current.gap,
      };
    }
    if (current.streamId !== null && current.startedAt !== null) {
      // The stream the current one replaced stays replaced, whatever start it claims (one dated
      // ahead is taken as started when first seen, and would otherwise seem newer every time).
      const older =
        streamId === current.previousStreamId ||
        startedAt.getTime() < current.startedAt.getTime() ||
        (startedAt.getTime() === current.startedAt.getTime() && streamId < current.streamId);
      if (older) {
        // The replaced process still runs: two processes report the shard.
        this.logger.warn(
          {
            shard_id: shardId,
            stream_id: current.streamId,
            refused_stream_id: streamId,
            refused_started_at: startedAt.toISOString(),
          },
          `Guild-state feed: stream ${streamId} still reports shard ${shardId}, which stream ${current.streamId} took over; its reports are refused (two processes report the shard)`,
        );
        throw new AppException(
          ErrorCode.VersionConflict,
          `Stream ${streamId} (started ${startedAt.toISOString()}) was replaced by stream ${current.streamId} (started ${current.startedAt.toISOString()}): this process's reports are out of date; a new process must start a new stream`,
        );
      }
      return {
        streamId,
        startedAt,
        seq: 0,
        gap: false,
        // A stream with a gap served nothing: nothing of it serves on.
        replaced: {
          streamId: current.streamId,
          reportedAt: current.gap ? null : current.reportedAt,
        },
      };
    }
    return { streamId, startedAt, seq: 0, gap: false };
  }

  /** A stream took a shard over: said once, naming both (docs/guild-state.md, "Takeovers"). */
  private tookOver(
    shardId: number,
    streamId: string,
    startedAt: Date,
    replaced: ReplacedStream,
    now: number,
  ): void {
    const silentFor =
      replaced.reportedAt === null ? null : (now - replaced.reportedAt.getTime()) / 1000;
    this.logger.warn(
      {
        shard_id: shardId,
        stream_id: streamId,
        started_at: startedAt.toISOString(),
        replaced_stream_id: replaced.streamId,
        replaced_silent_s: silentFor,
      },
      `Guild-state feed: stream ${streamId} took shard ${shardId} over from stream ${replaced.streamId}${silentFor === null ? '' : ` (its last report ${silentFor.toFixed(1)} s before)`}: a restarted process, or another process reporting the shard; the replaced stream's guild states serve until each is sent again`,
    );
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
   * share (GuildStateCopy): joins and leaves they imply first, then the guilds' rows. Guilds whose
   * reports start with their whole state are applied together, reading only their rows' facts;
   * the others read their held states a few at a time. Returns how many changed something and
   * the guilds whose full state is needed (unknown, drifted, or past a cap).
   */
  private async apply(
    tx: FeedTransaction,
    batch: { shardId: number; streamId: string; prepared: Prepared },
    accepted: { report: GuildStateReportDto; at: Date }[],
  ): Promise<{ applied: number; resync: string[]; drift: { detected: number; healed: number } }> {
    // Each guild's reports in order; guilds apart from each other need no order.
    const byGuild = new Map<string, { report: GuildStateReport; at: Date }[]>();
    for (const { report, at } of accepted) {
      const list = byGuild.get(report.guild_id) ?? [];
      list.push({ report: report as unknown as GuildStateReport, at });
      byGuild.set(report.guild_id, list);
    }
    const totals = { applied: 0, resync: [] as string[], drift: { detected: 0, healed: 0 } };
    if (byGuild.size === 0) return totals;
    const facts = await tx.states.facts([...byGuild.keys()]);
    const whole: string[] = [];
    const changed: string[] = [];
    for (const [guildId, list] of byGuild) {
      (list[0].report.type === 'guild_create' ? whole : changed).push(guildId);
    }
    const group = { tx, ...batch, byGuild, facts, totals };
    await this.applyGroup(group, whole, new Map());
    for (const ids of heldGroups(changed, facts)) {
      await this.applyGroup(group, ids, await tx.states.held(ids));
    }
    return totals;
  }

  /** One group of guilds: folded, then their joins and leaves, their rows, in a few statements. */
  private async applyGroup(
    group: {
      tx: FeedTransaction;
      shardId: number;
      streamId: string;
      prepared: Prepared;
      byGuild: Map<string, { report: GuildStateReport; at: Date }[]>;
      facts: Map<string, GuildStateFacts>;
      totals: { applied: number; resync: string[]; drift: { detected: number; healed: number } };
    },
    ids: readonly string[],
    held: Map<string, { held: HeldGuild; streamId: string; drifted: boolean }>,
  ): Promise<void> {
    if (ids.length === 0) return;
    const { tx, shardId, streamId, totals } = group;
    const rows: GuildStateRow[] = [];
    const adopted: AdoptedRow[] = [];
    const overCap: string[] = [];
    const membership: GuildReport[] = [];
    for (const guildId of ids) {
      const reports = group.byGuild.get(guildId) ?? [];
      const facts = group.facts.get(guildId);
      const outcome = foldGuild(held.get(guildId), reports, streamId, group.prepared);
      const { work } = outcome;
      const wasDrifted = facts?.drifted ?? false;
      if (outcome.membership) membership.push({ guildId, ...outcome.membership });
      const copy = work.copy;
      if (!work.dirty || !copy) {
        totals.applied += outcome.applied;
        if (outcome.resync) totals.resync.push(guildId);
        continue;
      }
      const hash = copy.hash();
      // The state the service holds, sent again (a restart): no write of it, at most its facts.
      const unchanged =
        outcome.replaced &&
        facts?.hash === hash &&
        !work.drifted &&
        !work.unavailable &&
        copy.deletedIds().length === 0;
      let row: { state: GuildState; json: string } | undefined;
      if (!unchanged) {
        // A guild sent whole and nothing else: its state and JSON as prepared.
        const whole = reports.length === 1 ? group.prepared.get(reports[0].report) : undefined;
        const state = whole?.copy === copy && whole.state ? whole.state : copy.state();
        const json = whole?.copy === copy && whole.json ? whole.json : JSON.stringify(state);
        const cap = capExceeded(state, json.length);
        if (cap !== null) {
          // Held as before, but not trusted: the bot's copy now differs from it.
          this.logger.warn(
            { guild_id: guildId, shard_id: shardId, cap },
            `Guild-state feed: a change would take guild ${guildId} past ${cap}; it was not applied, and the guild is read from the platform until its full state fits`,
          );
          if (facts) overCap.push(guildId);
          if (!wasDrifted) totals.drift.detected += 1;
          totals.resync.push(guildId);
          continue;
        }
        row = { state, json };
      }
      totals.applied += outcome.applied;
      if (!wasDrifted && work.drifted) totals.drift.detected += 1;
      if (wasDrifted && !work.drifted) totals.drift.healed += 1;
      if (outcome.resync) totals.resync.push(guildId);
      if (!row) {
        // Unchanged, so the row exists: its facts change when they differ.
        if (
          !facts ||
          facts.streamId !== work.streamId ||
          facts.drifted ||
          facts.unavailable ||
          facts.deletes
        ) {
          adopted.push({ guildId, streamId: work.streamId, reportedAt: work.reportedAt });
        }
        continue;
      }
      rows.push({
        guildId,
        shardId,
        streamId: work.streamId,
        held: { state: row.state, deletedIds: copy.deletedIds(), unavailable: work.unavailable },
        json: row.json,
        hash,
        drifted: work.drifted,
        reportedAt: work.reportedAt,
      });
    }
    // Joins (guild_create) and leaves (guild_delete) by the membership feed's time rule; a
    // leave drops the guild's state in the same transaction.
    await tx.applyReports(shardId, membership);
    await tx.states.save(rows);
    await tx.states.adopt(adopted);
    await tx.states.markDrifted(overCap);
    // A guild_create older than a leave the feed holds does not bring the guild back.
    await tx.states.dropNotPresent([...rows, ...adopted].map((row) => row.guildId));
  }
}
