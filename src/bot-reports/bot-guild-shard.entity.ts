import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

const safeInteger = {
  to: (value: number): number => value,
  from: (value: string): number => Number(value),
};

/** What the membership feed knows of one gateway shard: its last complete snapshot and report. */
@Entity('bot_guild_shards')
@Index('bot_guild_shards_version_idx', ['version'])
export class BotGuildShardEntity {
  @PrimaryColumn({ name: 'shard_id', type: 'integer' })
  shardId!: number;

  /** How many shards the bot ran at the shard's last complete snapshot; null before one. */
  @Column({ name: 'shard_count', type: 'integer', nullable: true })
  shardCount!: number | null;

  /** The newest snapshot received whole; null until one is. */
  @Column({ name: 'snapshot_at', type: 'timestamptz', nullable: true })
  snapshotAt!: Date | null;

  /** When the service last heard from the shard (its own clock, not the bot's). */
  @Column({ name: 'reported_at', type: 'timestamptz' })
  reportedAt!: Date;

  /** The guild-state feed's current report stream of the shard (docs/guild-state.md). */
  @Column({ name: 'stream_id', type: 'varchar', length: 64, nullable: true })
  streamId!: string | null;

  /** When that stream started (the bot's clock): an older stream's reports are refused. */
  @Column({ name: 'stream_started_at', type: 'timestamptz', nullable: true })
  streamStartedAt!: Date | null;

  /** The last report of the stream applied. */
  @Column({ name: 'stream_seq', type: 'bigint', default: 0, transformer: safeInteger })
  streamSeq!: number;

  /** Reports of the stream were missed: its guild states are not used until it is filled. */
  @Column({ name: 'stream_gap', type: 'boolean', default: false })
  streamGap!: boolean;

  /** When the current stream last reported (the service's clock). */
  @Column({ name: 'stream_reported_at', type: 'timestamptz', nullable: true })
  streamReportedAt!: Date | null;

  /**
   * The stream the current one replaced (a restart, or another process taking the shard over):
   * its guilds' states keep serving until each is replaced, within GUILD_STATE_MAX_AGE of
   * `previousStreamReportedAt` (docs/guild-state.md, "A restart").
   */
  @Column({ name: 'previous_stream_id', type: 'varchar', length: 64, nullable: true })
  previousStreamId!: string | null;

  /** When the replaced stream last reported (the service's clock); null when it had a gap. */
  @Column({ name: 'previous_stream_reported_at', type: 'timestamptz', nullable: true })
  previousStreamReportedAt!: Date | null;

  /** When the current stream replaced the previous one (the service's clock). */
  @Column({ name: 'stream_replaced_at', type: 'timestamptz', nullable: true })
  streamReplacedAt!: Date | null;

  /** The complete snapshot the newest one replaced (docs/bot-membership.md, "Takeovers"). */
  @Column({ name: 'previous_snapshot_at', type: 'timestamptz', nullable: true })
  previousSnapshotAt!: Date | null;

  @Column({ type: 'bigint', transformer: safeInteger })
  version!: number;
}
