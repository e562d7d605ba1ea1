import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** How one built-in command behaves in one guild. */
@Entity({ name: 'command_configs' })
export class CommandConfigEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  command!: string;

  @Column({ type: 'boolean' })
  enabled!: boolean;

  @Column({ type: 'jsonb' })
  allowed_roles!: string[];

  @Column({ type: 'jsonb' })
  disabled_channels!: string[];
}
