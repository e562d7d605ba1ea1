import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** bigint columns come back as strings from `pg`; versions stay far below 2^53. */
const safeInteger = {
  to: (value: number): number => value,
  from: (value: string): number => Number(value),
};

/**
 * One guild as the bot's gateway reported it (docs/bot-membership.md): present, or left (kept as a
 * tombstone so that an older report arriving late cannot bring it back). `changed_at` is the bot's
 * own time of the newest report applied; reports are applied only when they are not older.
 */
@Entity('bot_guilds')
@Index('bot_guilds_version_idx', ['version'])
@Index('bot_guilds_shard_idx', ['shardId', 'snapshotAt'])
export class BotGuildEntity {
  @PrimaryColumn({ name: 'guild_id', type: 'varchar', length: 20 })
  guildId!: string;

  /** The shard that last reported the guild. */
  @Column({ name: 'shard_id', type: 'integer' })
  shardId!: number;

  @Column({ type: 'boolean' })
  present!: boolean;

  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt!: Date;

  /** The newest snapshot of its shard that listed the guild. */
  @Column({ name: 'snapshot_at', type: 'timestamptz', nullable: true })
  snapshotAt!: Date | null;

  /** Taken from `bot_membership_version` on every write: instances read what changed after theirs. */
  @Column({ type: 'bigint', transformer: safeInteger })
  version!: number;
}
