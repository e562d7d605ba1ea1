import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** A channel the bot posts audit events to. */
@Entity({ name: 'auditlog_sinks' })
export class AuditlogSinkEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'varchar', length: 20 })
  channel!: string;

  @Column({ type: 'jsonb' })
  events!: string[];

  @Column({ type: 'boolean' })
  enabled!: boolean;
}
