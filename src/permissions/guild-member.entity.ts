import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** A `guildmembers` entry: permission strings given to one member directly. */
@Entity({ name: 'guild_members' })
export class GuildMemberEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 20 })
  user_id!: string;

  @Column({ type: 'jsonb' })
  perm_overrides!: string[];
}
