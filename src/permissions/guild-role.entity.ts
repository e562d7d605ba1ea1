import { Column, Entity, PrimaryColumn } from 'typeorm';
import { SettingRowEntity } from 'src/database/setting-row.entity';

/** A `guildroles` entry: the permission strings a Discord role grants, and its rank (`index`). */
@Entity({ name: 'guild_roles' })
export class GuildRoleEntity extends SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 20 })
  role_id!: string;

  @Column({ type: 'jsonb' })
  perms!: string[];

  /** A lower index ranks higher. */
  @Column({ type: 'integer' })
  index!: number;
}
