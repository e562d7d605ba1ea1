import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { GuildState } from 'clients/bot-reporter/src/guild-state';

/** bigint columns come back as strings from `pg`; versions stay far below 2^53. */
const safeInteger = {
  to: (value: number): number => value,
  from: (value: string): number => Number(value),
};

/**
 * One guild as the bot's gateway holds it (docs/guild-state.md): a row per guild, replaced whole on
 * each `guild_create` and rewritten by each change. Only a guild the membership feed holds as present
 * has a row: the transaction that makes a guild leave drops it.
 */
@Entity('bot_guild_states')
@Index('bot_guild_states_version_idx', ['version'])
export class GuildStateEntity {
  @PrimaryColumn({ name: 'guild_id', type: 'varchar', length: 20 })
  guildId!: string;

  @Column({ name: 'shard_id', type: 'integer' })
  shardId!: number;

  /** The report stream that last wrote the row: only the shard's current stream's rows are live. */
  @Column({ name: 'stream_id', type: 'varchar', length: 64 })
  streamId!: string;

  @Column({ type: 'jsonb' })
  state!: GuildState;

  /** Ids of roles, channels and threads deleted since the last `guild_create` (the newest 1,000). */
  @Column({ name: 'deleted_ids', type: 'jsonb' })
  deletedIds!: string[];

  /** The state's JSON length in characters: what a batch reads into memory. */
  @Column({ type: 'integer' })
  bytes!: number;

  /** guildStateHash(state), as the service computed it. */
  @Column({ type: 'varchar', length: 64 })
  hash!: string;

  /** The bot's hash differed from this copy's: not used until the next `guild_create`. */
  @Column({ type: 'boolean' })
  drifted!: boolean;

  /** An outage (`GUILD_DELETE` with `unavailable`): not used until the next `guild_create`. */
  @Column({ type: 'boolean' })
  unavailable!: boolean;

  /** The bot's time of the newest report applied. */
  @Column({ name: 'reported_at', type: 'timestamptz' })
  reportedAt!: Date;

  /** From `bot_membership_version`, like every write of the bot's feeds. */
  @Column({ type: 'bigint', transformer: safeInteger })
  version!: number;
}
