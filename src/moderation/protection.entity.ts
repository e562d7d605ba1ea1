import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** Automatic protection against raids and impersonation. */
@Entity({ name: 'protection' })
export class ProtectionEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 16 })
  id!: string;

  @Column({ type: 'varchar', length: 10, nullable: true })
  minimum_account_age!: string | null;

  @Column({ type: 'integer', nullable: true })
  max_mentions!: number | null;

  @Column({ type: 'integer' })
  hoist_detection!: number;

  @Column({ type: 'integer' })
  fake_bot_detection!: number;
}
