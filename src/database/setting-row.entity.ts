import { Column, PrimaryColumn, VersionColumn } from 'typeorm';

/**
 * The columns every stored setting row has: the guild it belongs to, who created and last changed
 * it when, and its version (raised by every save; the settings engine publishes it and refuses a
 * stale Update or Delete). A setting's entity extends this and adds one property per column.
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

  @VersionColumn({ type: 'integer', default: 1 })
  version!: number;
}
