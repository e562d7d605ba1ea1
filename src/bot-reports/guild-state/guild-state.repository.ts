import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { GuildState } from 'clients/bot-reporter/src/guild-state';

/** Every write takes its version from the feeds' one sequence (docs/bot-membership.md). */
const NEXT_VERSION = `nextval('bot_membership_version')`;

/** What the service holds of one guild between reports. */
export interface HeldGuild {
  state: GuildState;
  /** Roles, channels and threads deleted since the last `guild_create`, oldest first. */
  deletedIds: string[];
  unavailable: boolean;
}

/** A shard's current report stream, as `bot_guild_shards` holds it. */
export interface ShardStream {
  streamId: string | null;
  startedAt: Date | null;
  seq: number;
  gap: boolean;
  /** When the stream last reported (the service's clock); null before it has. */
  reportedAt: Date | null;
  /** The stream it replaced: never the newer one again. */
  previousStreamId: string | null;
}

/** The stream a new one replaces: its guilds' states serve until each is replaced. */
export interface ReplacedStream {
  streamId: string;
  /** When it last reported; null when its states were not live (a gap), so none serve. */
  reportedAt: Date | null;
}

/** A guild's row without its state: what a `guild_create` is compared with. */
export interface GuildStateFacts {
  streamId: string;
  hash: string;
  drifted: boolean;
  unavailable: boolean;
  /** Roles, channels or threads deleted since the last `guild_create` are remembered. */
  deletes: boolean;
  /** The state's JSON length. */
  bytes: number;
}

/** A row whose state a `guild_create` repeated: only its facts change. */
export interface AdoptedRow {
  guildId: string;
  streamId: string;
  reportedAt: Date;
}

/** A guild's row as the feed writes it. */
export interface GuildStateRow {
  guildId: string;
  shardId: number;
  streamId: string;
  held: HeldGuild;
  /** JSON.stringify(held.state). */
  json: string;
  hash: string;
  drifted: boolean;
  reportedAt: Date;
}

/** What every instance keeps in memory of a guild's row, to tell whether it is live. */
export interface GuildStateMeta {
  guildId: string;
  shardId: number;
  streamId: string;
  drifted: boolean;
  unavailable: boolean;
  version: number;
}

interface MetaRow {
  guild_id: string;
  shard_id: number;
  stream_id: string;
  drifted: boolean;
  unavailable: boolean;
  version: string;
}

const META_COLUMNS = 'guild_id, shard_id, stream_id, drifted, unavailable, version';

function metaOf(row: MetaRow): GuildStateMeta {
  return {
    guildId: row.guild_id,
    shardId: row.shard_id,
    streamId: row.stream_id,
    drifted: row.drifted,
    unavailable: row.unavailable,
    version: Number(row.version),
  };
}

/** Rows as one JSON array, each state's JSON spliced in as it was serialised. */
export function rowsDocument(rows: readonly GuildStateRow[]): string {
  const items = rows.map(
    (r) =>
      `{"guild_id":${JSON.stringify(r.guildId)},"shard_id":${r.shardId},"stream_id":${JSON.stringify(r.streamId)},"state":${r.json},"deleted_ids":${JSON.stringify(r.held.deletedIds)},"hash":${JSON.stringify(r.hash)},"drifted":${r.drifted},"unavailable":${r.held.unavailable},"reported_at":"${r.reportedAt.toISOString()}","bytes":${r.json.length}}`,
  );
  return `[${items.join(',')}]`;
}

/** The guild-state feed's writes, inside the feeds' transaction (it holds their lock). */
export class GuildStateWrites {
  constructor(private readonly manager: EntityManager) {}

  async shardStream(shardId: number): Promise<ShardStream> {
    const [row] = await this.manager.query<
      {
        stream_id: string | null;
        stream_started_at: Date | string | null;
        stream_seq: string;
        stream_gap: boolean;
        stream_reported_at: Date | string | null;
        previous_stream_id: string | null;
      }[]
    >(
      `SELECT stream_id, stream_started_at, stream_seq, stream_gap, stream_reported_at,
         previous_stream_id
       FROM bot_guild_shards WHERE shard_id = $1`,
      [shardId],
    );
    if (!row) {
      return {
        streamId: null,
        startedAt: null,
        seq: 0,
        gap: false,
        reportedAt: null,
        previousStreamId: null,
      };
    }
    return {
      streamId: row.stream_id,
      startedAt: row.stream_started_at === null ? null : new Date(row.stream_started_at),
      seq: Number(row.stream_seq),
      gap: row.stream_gap,
      reportedAt: row.stream_reported_at === null ? null : new Date(row.stream_reported_at),
      previousStreamId: row.previous_stream_id,
    };
  }

  /**
   * The shard's stream after a batch; the shard has reported (`reportedAt`, the service's clock).
   * With `replaced`, the stream took the shard over from that one (kept until the next takeover).
   */
  async saveShardStream(
    shardId: number,
    stream: { streamId: string; startedAt: Date; seq: number; gap: boolean },
    reportedAt: Date,
    replaced?: ReplacedStream,
  ): Promise<void> {
    await this.manager.query(
      `INSERT INTO bot_guild_shards (shard_id, shard_count, snapshot_at, reported_at, version,
         stream_id, stream_started_at, stream_seq, stream_gap, stream_reported_at)
       VALUES ($1, NULL, NULL, $2, ${NEXT_VERSION}, $3, $4, $5, $6, $2)
       ON CONFLICT (shard_id) DO UPDATE SET
         reported_at = GREATEST(bot_guild_shards.reported_at, EXCLUDED.reported_at),
         version = EXCLUDED.version,
         stream_id = EXCLUDED.stream_id,
         stream_started_at = EXCLUDED.stream_started_at,
         stream_seq = EXCLUDED.stream_seq,
         stream_gap = EXCLUDED.stream_gap,
         stream_reported_at = EXCLUDED.stream_reported_at,
         previous_stream_id = CASE WHEN $7 THEN $8 ELSE bot_guild_shards.previous_stream_id END,
         previous_stream_reported_at = CASE WHEN $7 THEN $9::timestamptz
           ELSE bot_guild_shards.previous_stream_reported_at END,
         stream_replaced_at = CASE WHEN $7 THEN EXCLUDED.reported_at
           ELSE bot_guild_shards.stream_replaced_at END`,
      [
        shardId,
        reportedAt,
        stream.streamId,
        stream.startedAt,
        stream.seq,
        stream.gap,
        replaced !== undefined,
        replaced?.streamId ?? null,
        replaced?.reportedAt ?? null,
      ],
    );
  }

  /** The facts of these guilds' rows (those with one), without their states. */
  async facts(guildIds: readonly string[]): Promise<Map<string, GuildStateFacts>> {
    if (guildIds.length === 0) return new Map();
    const rows = await this.manager.query<
      {
        guild_id: string;
        stream_id: string;
        hash: string;
        drifted: boolean;
        unavailable: boolean;
        deletes: boolean;
        bytes: number;
      }[]
    >(
      `SELECT guild_id, stream_id, hash, drifted, unavailable,
         jsonb_array_length(deleted_ids) > 0 AS deletes, bytes
       FROM bot_guild_states WHERE guild_id = ANY($1::varchar[])`,
      [guildIds],
    );
    return new Map(
      rows.map((row) => [
        row.guild_id,
        {
          streamId: row.stream_id,
          hash: row.hash,
          drifted: row.drifted,
          unavailable: row.unavailable,
          deletes: row.deletes,
          bytes: row.bytes,
        },
      ]),
    );
  }

  /**
   * Rows whose state a `guild_create` repeated (the same hash): their state stays as it is; they
   * now come from `streamId`, undrifted, available, with no deleted ids remembered.
   */
  async adopt(rows: readonly AdoptedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.manager.query(
      `UPDATE bot_guild_states s SET stream_id = r.stream_id, drifted = false, unavailable = false,
         deleted_ids = '[]'::jsonb, reported_at = r.reported_at, version = ${NEXT_VERSION}
       FROM unnest($1::varchar[], $2::varchar[], $3::timestamptz[])
         AS r(guild_id, stream_id, reported_at)
       WHERE s.guild_id = r.guild_id`,
      [rows.map((r) => r.guildId), rows.map((r) => r.streamId), rows.map((r) => r.reportedAt)],
    );
  }

  /** What is held of these guilds (those with a row), and the stream that wrote each. */
  async held(
    guildIds: readonly string[],
  ): Promise<Map<string, { held: HeldGuild; streamId: string; drifted: boolean }>> {
    if (guildIds.length === 0) return new Map();
    const rows = await this.manager.query<
      {
        guild_id: string;
        stream_id: string;
        state: GuildState;
        deleted_ids: string[];
        unavailable: boolean;
        drifted: boolean;
      }[]
    >(
      `SELECT guild_id, stream_id, state, deleted_ids, unavailable, drifted FROM bot_guild_states
       WHERE guild_id = ANY($1::varchar[])`,
      [guildIds],
    );
    return new Map(
      rows.map((row) => [
        row.guild_id,
        {
          held: { state: row.state, deletedIds: row.deleted_ids, unavailable: row.unavailable },
          streamId: row.stream_id,
          drifted: row.drifted,
        },
      ]),
    );
  }

  /**
   * Writes these guilds' rows whole, in one statement: one JSON document of the rows, each state
   * in it as serialised once (no array literal to escape, nothing parsed twice).
   */
  async save(rows: readonly GuildStateRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.manager.query(
      `INSERT INTO bot_guild_states (guild_id, shard_id, stream_id, state, deleted_ids, hash,
         drifted, unavailable, reported_at, bytes, version)
       SELECT r.guild_id, r.shard_id, r.stream_id, r.state, r.deleted_ids, r.hash, r.drifted,
         r.unavailable, r.reported_at, r.bytes, ${NEXT_VERSION}
       FROM json_to_recordset($1::json) AS r(guild_id varchar, shard_id int, stream_id varchar,
         state jsonb, deleted_ids jsonb, hash varchar, drifted boolean, unavailable boolean,
         reported_at timestamptz, bytes int)
       ON CONFLICT (guild_id) DO UPDATE SET
         shard_id = EXCLUDED.shard_id, stream_id = EXCLUDED.stream_id, state = EXCLUDED.state,
         deleted_ids = EXCLUDED.deleted_ids, hash = EXCLUDED.hash, drifted = EXCLUDED.drifted,
         unavailable = EXCLUDED.unavailable, reported_at = EXCLUDED.reported_at,
         bytes = EXCLUDED.bytes, version = EXCLUDED.version`,
      [rowsDocument(rows)],
    );
  }

  /** These guilds' states are no longer trusted (a change past a cap): their full state is needed. */
  async markDrifted(guildIds: readonly string[]): Promise<void> {
    if (guildIds.length === 0) return;
    await this.manager.query(
      `UPDATE bot_guild_states SET drifted = true, version = ${NEXT_VERSION}
       WHERE guild_id = ANY($1::varchar[])`,
      [guildIds],
    );
  }

  /**
   * Drops the state of every guild the membership feed does not hold as present (of `guildIds`,
   * or of all): one truth, a guild the bot is not in has no state.
   */
  async dropNotPresent(guildIds?: readonly string[]): Promise<void> {
    if (guildIds?.length === 0) return;
    await this.manager.query(
      `DELETE FROM bot_guild_states s WHERE ${guildIds ? 's.guild_id = ANY($1::varchar[]) AND' : ''}
         NOT EXISTS (SELECT 1 FROM bot_guilds g WHERE g.guild_id = s.guild_id AND g.present)`,
      guildIds ? [guildIds] : [],
    );
  }
}

/** The guild-state feed's reads, behind methods named for their intent. */
@Injectable()
export class GuildStateRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Rows written after `version`, oldest first, at most `limit`, without their state. */
  async changesAfter(version: number, limit: number): Promise<GuildStateMeta[]> {
    const rows = await this.dataSource.query<MetaRow[]>(
      `SELECT ${META_COLUMNS} FROM bot_guild_states WHERE version > $1 ORDER BY version LIMIT $2`,
      [version, limit],
    );
    return rows.map(metaOf);
  }

  /** The stored hash of each of these guilds that has a row. */
  async storedHashes(guildIds: readonly string[]): Promise<Map<string, string>> {
    if (guildIds.length === 0) return new Map();
    const rows = await this.dataSource.query<{ guild_id: string; hash: string }[]>(
      `SELECT guild_id, hash FROM bot_guild_states WHERE guild_id = ANY($1::varchar[])`,
      [guildIds],
    );
    return new Map(rows.map((row) => [row.guild_id, row.hash]));
  }

  /** One guild's state and its row's facts; undefined when there is no row. */
  async load(guildId: string): Promise<{ meta: GuildStateMeta; state: GuildState } | undefined> {
    const [row] = await this.dataSource.query<(MetaRow & { state: GuildState })[]>(
      `SELECT ${META_COLUMNS}, state FROM bot_guild_states WHERE guild_id = $1`,
      [guildId],
    );
    return row ? { meta: metaOf(row), state: row.state } : undefined;
  }
}
