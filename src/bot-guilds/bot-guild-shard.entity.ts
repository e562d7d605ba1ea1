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

  @Column({ type: 'bigint', transformer: safeInteger })
  version!: number;
}
