import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** How the bot locks the guild down. */
@Entity({ name: 'lockdown_settings' })
export class LockdownSettingsEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 16 })
  id!: string;

  @Column({ type: 'jsonb' })
  member_roles!: string[];

  @Column({ type: 'boolean' })
  require_correct_layout!: boolean;
}
