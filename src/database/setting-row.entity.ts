import { Column, PrimaryColumn } from 'typeorm';

/**
 * The columns every stored setting row has: the guild it belongs to, and who created and last
 * changed it when. A setting's entity extends this and adds one property per column.
 */
export abstract class SettingRowEntity {
  @PrimaryColumn({ type: 'varchar', length: 20 })
  guild_id!: string;

  @Column({ type: 'timestamptz' })
  created_at!: Date;

  @Column({ type: 'varchar', length: 20 })
  created_by!: string;

  @Column({ type: 'timestamptz' })
  last_updated_at!: Date;

  @Column({ type: 'varchar', length: 20 })
  last_updated_by!: string;
}
