import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { SHARD_STATUSES, type ShardStatus } from 'src/bot-reports/shard-stats/shard-stats';

/** bigint columns come back as strings from `pg`; every value stored here is a safe integer. */
const safeInteger = {
  to: (value: number | null): number | null => value,
  from: (value: string | null): number | null => (value === null ? null : Number(value)),
};

/** The last report of one gateway shard of the bot (`PUT /internal/shards/{shard_id}`). */
@Entity('shard_status')
@Check(
  'shard_status_status_check',
  `"status" IN (${SHARD_STATUSES.map((s) => `'${s}'`).join(', ')})`,
)
export class ShardStatusEntity {
  @PrimaryColumn({ name: 'shard_id', type: 'integer' })
  shardId!: number;

  @Column({ type: 'varchar', length: 16 })
  status!: ShardStatus;

  /** Heartbeat round trip in ms; null before the first heartbeat was acknowledged. */
  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs!: number | null;

  @Column({ type: 'bigint', transformer: safeInteger })
  guilds!: number;

  @Column({ type: 'bigint', transformer: safeInteger })
  users!: number;

  /** Seconds since the shard's current connection was made. */
  @Column({ name: 'uptime_s', type: 'bigint', transformer: safeInteger })
  uptimeSeconds!: number;

  /** Seconds since the shard first started. */
  @Column({ name: 'total_uptime_s', type: 'bigint', transformer: safeInteger })
  totalUptimeSeconds!: number;

  @Column({ name: 'reported_at', type: 'timestamptz' })
  reportedAt!: Date;
}
