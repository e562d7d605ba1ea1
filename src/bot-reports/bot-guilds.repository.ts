import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { GuildStateWrites } from 'src/bot-reports/guild-state/guild-state.repository';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** A guild's newest state in one batch of reports. */
export interface GuildReport {
  guildId: string;
  present: boolean;
  at: Date;
}

/** A row of `bot_guilds` as instances read it to follow changes. */
export interface GuildChange {
  guildId: string;
  present: boolean;
  version: number;
}

/** A row of `bot_guild_shards`. */
export interface ShardState {
  shardId: number;
  shardCount: number | null;
  snapshotAt: Date | null;
  reportedAt: Date;
  /** The guild-state feed's current stream of the shard, and whether it has a gap. */
  streamId: string | null;
  streamGap: boolean;
  /** The stream the current one replaced, and when that one last reported (null: a gap). */
  previousStreamId: string | null;
  previousStreamReportedAt: Date | null;
  /** When the current stream replaced the previous one. */
  streamReplacedAt: Date | null;
  /** The complete snapshot the newest one replaced. */
  previousSnapshotAt: Date | null;
  version: number;
}

/** The bot's reports an instance queues at most (docs/bot-membership.md, "A very large bot"). */
export const FEED_QUEUE_BOUND = 64;
const FEED_QUEUE_RETRY_S = 1;

/** Every write takes its version from this sequence (created by the migration). */
const NEXT_VERSION = `nextval('bot_membership_version')`;
/**
 * The advisory-lock key of the feed's writes: one writer at a time, so versions become visible in
 * the order they were taken and an instance reading "after version v" never skips a row.
 */
const FEED_LOCK_KEY = '7314029547210093823';

/** A complete snapshot of shard $1 newer than $2: an older snapshot's parts then change nothing. */
const NEWER_SNAPSHOT = `SELECT 1 FROM bot_guild_shards newer
  WHERE newer.shard_id = $1 AND newer.snapshot_at > $2`;

/**
 * The platform's shard of a row's `guild_id` under `count` shards, `(id >> 22) % count`, exactly as
 * `shardOf` computes it: in bigint for ids below 2^63 (every id the platform has issued), by
 * numeric integer division above. Numeric division took 2.5 times as long over a million rows, a
 * completed snapshot's cost at that scale (docs/bot-membership.md, "A very large bot"), and rounds
 * a quotient's fraction away near 2^63.
 */
function shardOfGuild(count: string): string {
  return `(CASE WHEN length(guild_id) < 19
      OR (length(guild_id) = 19 AND guild_id COLLATE "C" < '9223372036854775808')
    THEN (guild_id::bigint >> 22) % ${count}
    ELSE mod(div(guild_id::numeric, 4194304), ${count}) END)`;
}

/** The feed's writes, inside one transaction holding the feed's lock. */
export class FeedTransaction {
  /** The guild-state feed's writes, in the same transaction: a guild that leaves loses its state. */
  readonly states: GuildStateWrites;

  constructor(private readonly manager: EntityManager) {
    this.states = new GuildStateWrites(manager);
  }

  /**
   * Records `guildIds` as listed by the shard's snapshot taken at `snapshotAt`. Nothing becomes
   * present before the snapshot is complete (`completeSnapshot`): a snapshot that never completes
   * makes no guild present. A guild not known before gets a row that is not present and ordered
   * before every report, so any join or leave reported meanwhile still applies. Rows of the
   * shard's older snapshots that never completed and were never present go first, so the rows a
   * shard's snapshots hold stay bounded by one snapshot's `total`. A row already listed by a newer
   * snapshot, or any row once a newer snapshot of the shard is complete, is left alone.
   */
  async listInSnapshot(shardId: number, snapshotAt: Date, guildIds: string[]): Promise<void> {
    if (guildIds.length === 0) return;
    await this.manager.query(
      `DELETE FROM bot_guilds WHERE shard_id = $1 AND snapshot_at < $2 AND NOT present
         AND changed_at = '-infinity'`,
      [shardId, snapshotAt],
    );
    await this.manager.query(
      `INSERT INTO bot_guilds (guild_id, shard_id, present, changed_at, snapshot_at, version)
       SELECT id, $1, false, '-infinity', $2, ${NEXT_VERSION}
       FROM unnest($3::varchar[]) AS listed(id)
       WHERE NOT EXISTS (${NEWER_SNAPSHOT})
       ON CONFLICT (guild_id) DO UPDATE SET
         shard_id = EXCLUDED.shard_id,
         snapshot_at = EXCLUDED.snapshot_at
       WHERE bot_guilds.snapshot_at IS NULL OR bot_guilds.snapshot_at <= EXCLUDED.snapshot_at`,
      [shardId, snapshotAt, guildIds],
    );
  }

  /**
   * A complete snapshot: the guilds it lists are present unless a report newer than it says they
   * were left (`orderAt`: the snapshot's time, or the service's if that is earlier, so that a
   * snapshot dated ahead cannot outrank a leave the bot reports meanwhile); then `leaveUnlisted`.
   */
  async completeSnapshot(
    shardId: number,
    snapshotAt: Date,
    orderAt: Date,
    shardCount: number,
  ): Promise<void> {
    await this.manager.query(
      `UPDATE bot_guilds SET present = true, changed_at = $3, version = ${NEXT_VERSION}
       WHERE shard_id = $1 AND snapshot_at = $2 AND NOT present AND changed_at <= $3
         AND NOT EXISTS (${NEWER_SNAPSHOT})`,
      [shardId, snapshotAt, orderAt],
    );
    // Present and listed: a leave reported as older than the snapshot no longer applies.
    await this.manager.query(
      `UPDATE bot_guilds SET changed_at = $3
       WHERE shard_id = $1 AND snapshot_at = $2 AND present AND changed_at < $3
         AND NOT EXISTS (${NEWER_SNAPSHOT})`,
      [shardId, snapshotAt, orderAt],
    );
    await this.leaveUnlisted(shardId, snapshotAt, orderAt, shardCount);
  }

  /** How many guild ids of the shard's snapshot taken at `snapshotAt` have been received. */
  async countListed(shardId: number, snapshotAt: Date): Promise<number> {
    const [row] = await this.manager.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM bot_guilds WHERE shard_id = $1 AND snapshot_at = $2`,
      [shardId, snapshotAt],
    );
    return row.count;
  }

  /**
   * A complete snapshot: the guilds of the shard (by the platform's rule under the snapshot's
   * shard count, not by which shard last reported them, so a resharding leaves no guild behind and
   * takes none from another shard) that it did not list are left, unless a report newer than the
   * snapshot (a join after READY) says they are there. Nothing changes when a newer snapshot of
   * the shard is already complete.
   */
  private async leaveUnlisted(
    shardId: number,
    snapshotAt: Date,
    orderAt: Date,
    shardCount: number,
  ): Promise<void> {
    // A CTE, so that the driver answers rows (it answers [rows, count] for a bare UPDATE).
    const left = await this.manager.query<{ guild_id: string }[]>(
      `WITH left_guilds AS (
         UPDATE bot_guilds SET present = false, changed_at = $4, version = ${NEXT_VERSION}
         WHERE present AND changed_at < $4 AND (snapshot_at IS NULL OR snapshot_at < $2)
           AND ${shardOfGuild('$3')} = $1
           AND NOT EXISTS (${NEWER_SNAPSHOT})
         RETURNING guild_id
       ) SELECT guild_id FROM left_guilds`,
      [shardId, snapshotAt, shardCount, orderAt],
    );
    // Only a present guild has a state: those just left lose theirs, without reading every state.
    await this.states.dropNotPresent(left.map((row) => row.guild_id));
  }

  /**
   * Joins and leaves, one per guild; each is applied when it is newer than the stored state (a
   * replay, as old as it, changes nothing), and a leave also when it is as old as a join or a
   * snapshot (a GUILD_DELETE read in the same millisecond as READY). Returns the ids applied.
   */
  async applyReports(shardId: number, reports: GuildReport[]): Promise<string[]> {
    if (reports.length === 0) return [];
    const rows = await this.manager.query<{ guild_id: string }[]>(
      `INSERT INTO bot_guilds (guild_id, shard_id, present, changed_at, snapshot_at, version)
       SELECT r.id, $1, r.present, r.at, NULL, ${NEXT_VERSION}
       FROM unnest($2::varchar[], $3::boolean[], $4::timestamptz[]) AS r(id, present, at)
       ON CONFLICT (guild_id) DO UPDATE SET
         present = EXCLUDED.present,
         changed_at = EXCLUDED.changed_at,
         shard_id = EXCLUDED.shard_id,
         version = EXCLUDED.version
       WHERE bot_guilds.changed_at < EXCLUDED.changed_at
          OR (bot_guilds.changed_at = EXCLUDED.changed_at AND bot_guilds.present
              AND NOT EXCLUDED.present)
       RETURNING guild_id`,
      [
        shardId,
        reports.map((r) => r.guildId),
        reports.map((r) => r.present),
        reports.map((r) => r.at),
      ],
    );
    const applied = rows.map((row) => row.guild_id);
    const left = new Set(reports.filter((r) => !r.present).map((r) => r.guildId));
    await this.states.dropNotPresent(applied.filter((id) => left.has(id)));
    return applied;
  }

  /**
   * The platform refused a guild the feed holds (403 or 404): it is left as of `at`, unless the
   * bot reported something newer. Returns whether the guild was held as present.
   */
  async leaveSeenByPlatform(guildId: string, at: Date): Promise<boolean> {
    // A CTE, so that the driver answers rows (it answers [rows, count] for a bare UPDATE).
    const [row] = await this.manager.query<{ count: number }[]>(
      `WITH left_guild AS (
         UPDATE bot_guilds SET present = false, changed_at = $2, version = ${NEXT_VERSION}
         WHERE guild_id = $1 AND present AND changed_at <= $2 RETURNING guild_id
       ) SELECT count(*)::int AS count FROM left_guild`,
      [guildId, at],
    );
    if (row.count > 0) await this.states.dropNotPresent([guildId]);
    return row.count > 0;
  }

  /**
   * Shards silent since `before` (a stray shard id, a shard of an old layout, a bot gone for
   * long) lose their snapshot, and the guilds they last reported are left as of `at`: a claim that
   * old is no longer believed, and no layout can be built from it. The row stays (shard ids are
   * bounded) so that every instance reads the change; a report from the shard brings it back.
   * Returns the shards expired.
   */
  async expireShardsSilentSince(before: Date, at: Date): Promise<number[]> {
    // A CTE, so that the driver answers rows (it answers [rows, count] for a bare UPDATE).
    const rows = await this.manager.query<{ shard_id: number }[]>(
      `WITH expired AS (
         UPDATE bot_guild_shards SET snapshot_at = NULL, shard_count = NULL, version = ${NEXT_VERSION}
         WHERE reported_at < $1 AND snapshot_at IS NOT NULL RETURNING shard_id
       ) SELECT shard_id FROM expired ORDER BY shard_id`,
      [before],
    );
    const shardIds = rows.map((row) => row.shard_id);
    if (shardIds.length === 0) return [];
    await this.manager.query(
      `UPDATE bot_guilds SET present = false, changed_at = $2, version = ${NEXT_VERSION}
       WHERE present AND shard_id = ANY($1::int[]) AND changed_at <= $2`,
      [shardIds, at],
    );
    await this.states.dropNotPresent();
    return shardIds;
  }

  /**
   * The shard has reported; with `snapshot`, a snapshot of it is complete (kept unless a newer
   * one already is).
   */
  async shardReported(
    shardId: number,
    reportedAt: Date,
    snapshot?: { at: Date; shardCount: number },
  ): Promise<{ replacedSnapshotAt: Date | null }> {
    // The snapshot a newer complete one replaces is kept (a takeover shows in the feeds' status).
    const [row] = await this.manager.query<{ replaced: Date | string | null }[]>(
      `WITH before AS (SELECT snapshot_at FROM bot_guild_shards WHERE shard_id = $1),
       saved AS (
       INSERT INTO bot_guild_shards (shard_id, shard_count, snapshot_at, reported_at, version)
       VALUES ($1, $2, $3, $4, ${NEXT_VERSION})
       ON CONFLICT (shard_id) DO UPDATE SET
         reported_at = GREATEST(bot_guild_shards.reported_at, EXCLUDED.reported_at),
         version = EXCLUDED.version,
         previous_snapshot_at = CASE WHEN $3::timestamptz IS NOT NULL
                                  AND bot_guild_shards.snapshot_at < $3::timestamptz
                                THEN bot_guild_shards.snapshot_at
                                ELSE bot_guild_shards.previous_snapshot_at END,
         shard_count = CASE WHEN $3::timestamptz IS NOT NULL AND (bot_guild_shards.snapshot_at IS NULL
                              OR bot_guild_shards.snapshot_at <= $3::timestamptz)
                            THEN EXCLUDED.shard_count ELSE bot_guild_shards.shard_count END,
         snapshot_at = CASE WHEN $3::timestamptz IS NOT NULL AND (bot_guild_shards.snapshot_at IS NULL
                              OR bot_guild_shards.snapshot_at <= $3::timestamptz)
                            THEN EXCLUDED.snapshot_at ELSE bot_guild_shards.snapshot_at END
       RETURNING snapshot_at)
       SELECT CASE WHEN $3::timestamptz IS NOT NULL AND before.snapshot_at < $3::timestamptz
                THEN before.snapshot_at END AS replaced
       FROM saved LEFT JOIN before ON true`,
      [shardId, snapshot?.shardCount ?? null, snapshot?.at ?? null, reportedAt],
    );
    return { replacedSnapshotAt: row?.replaced ? new Date(row.replaced) : null };
  }
}

/** The membership feed's tables (docs/bot-membership.md), behind methods named for their intent. */
@Injectable()
export class BotGuildsRepository {
  /** This instance's feed writes, one after another (the last one queued). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Writes queued or under way on this instance. */
  private queued = 0;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction, after every other feed write has committed. An instance's
   * writes wait their turn here, without a connection: waiting on the feeds' lock in the database
   * held one each, and a burst of snapshot parts (a large bot's shards reconnecting) took the
   * whole pool from every other request (docs/bot-membership.md, "A very large bot"). A report of
   * the bot (`fromBot`) finding FEED_QUEUE_BOUND writes ahead is refused at once, 429 with
   * `Retry-After`: its reporter sends it again.
   */
  inFeedTransaction<T>(
    work: (tx: FeedTransaction) => Promise<T>,
    { fromBot = false }: { fromBot?: boolean } = {},
  ): Promise<T> {
    if (fromBot && this.queued >= FEED_QUEUE_BOUND) {
      const refusal = new AppException(
        ErrorCode.RateLimited,
        `This instance is writing ${this.queued} of the bot's reports already; retry in ${FEED_QUEUE_RETRY_S} second`,
      );
      refusal.headers = { 'Retry-After': FEED_QUEUE_RETRY_S };
      return Promise.reject(refusal);
    }
    this.queued += 1;
    const run = this.queue.then(() =>
      this.dataSource.transaction(async (manager) => {
        await manager.query('SELECT pg_advisory_xact_lock($1::bigint)', [FEED_LOCK_KEY]);
        return work(new FeedTransaction(manager));
      }),
    );
    this.queue = run.catch(() => undefined).finally(() => (this.queued -= 1));
    return run;
  }

  /** Guild rows written after `version`, oldest first, at most `limit`. */
  async guildChangesAfter(version: number, limit: number): Promise<GuildChange[]> {
    const rows = await this.dataSource.query<
      { guild_id: string; present: boolean; version: string }[]
    >(
      `SELECT guild_id, present, version FROM bot_guilds WHERE version > $1
       ORDER BY version LIMIT $2`,
      [version, limit],
    );
    return rows.map((row) => ({
      guildId: row.guild_id,
      present: row.present,
      version: Number(row.version),
    }));
  }

  /** Shard rows written after `version`. */
  async shardChangesAfter(version: number): Promise<ShardState[]> {
    const rows = await this.dataSource.query<
      {
        shard_id: number;
        shard_count: number | null;
        snapshot_at: Date | string | null;
        reported_at: Date | string;
        stream_id: string | null;
        stream_gap: boolean;
        previous_stream_id: string | null;
        previous_stream_reported_at: Date | string | null;
        stream_replaced_at: Date | string | null;
        previous_snapshot_at: Date | string | null;
        version: string;
      }[]
    >(
      `SELECT shard_id, shard_count, snapshot_at, reported_at, stream_id, stream_gap,
         previous_stream_id, previous_stream_reported_at, stream_replaced_at, previous_snapshot_at,
         version
       FROM bot_guild_shards
       WHERE version > $1 ORDER BY version`,
      [version],
    );
    const date = (value: Date | string | null): Date | null =>
      value === null ? null : new Date(value);
    return rows.map((row) => ({
      shardId: row.shard_id,
      shardCount: row.shard_count,
      snapshotAt: date(row.snapshot_at),
      reportedAt: new Date(row.reported_at),
      streamId: row.stream_id,
      streamGap: row.stream_gap,
      previousStreamId: row.previous_stream_id,
      previousStreamReportedAt: date(row.previous_stream_reported_at),
      streamReplacedAt: date(row.stream_replaced_at),
      previousSnapshotAt: date(row.previous_snapshot_at),
      version: Number(row.version),
    }));
  }

  /** Present guilds per shard, for the feed's status. */
  async presentGuildsPerShard(): Promise<Map<number, number>> {
    const rows = await this.dataSource.query<{ shard_id: number; count: number }[]>(
      `SELECT shard_id, count(*)::int AS count FROM bot_guilds WHERE present GROUP BY shard_id`,
    );
    return new Map(rows.map((row) => [row.shard_id, row.count]));
  }

  /** Forgets left guilds reported before `before`: no report that old is accepted any more. */
  async purgeLeftBefore(before: Date): Promise<number> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH purged AS (
         DELETE FROM bot_guilds WHERE NOT present AND changed_at < $1 RETURNING guild_id
       ) SELECT count(*)::int AS count FROM purged`,
      [before],
    );
    return row.count;
  }
}
