import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One executed settings change: who, when, what, and the rows before and after. */
@Entity({ name: 'settings_audit_log' })
@Index('settings_audit_log_guild_created_idx', ['guild_id', 'created_at'])
export class SettingsAuditEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'varchar', length: 20 })
  guild_id!: string;

  @Column({ type: 'varchar', length: 64 })
  setting!: string;

  @Column({ type: 'varchar', length: 16 })
  operation!: string;

  @Column({ type: 'varchar', length: 20 })
  user_id!: string;

  @Column({ type: 'jsonb', nullable: true })
  before!: unknown;

  @Column({ type: 'jsonb', nullable: true })
  after!: unknown;

  @Column({ type: 'timestamptz' })
  created_at!: Date;
}
