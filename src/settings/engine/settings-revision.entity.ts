import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { SessionType } from 'src/common/auth/authenticated-session';

/** The operations a revision records. */
export const REVISION_OPERATIONS = ['Create', 'Update', 'Delete', 'Reorder'] as const;
export type RevisionOperation = (typeof REVISION_OPERATIONS)[number];

/** The columns whose value changed: `{column: {before, after}}`. */
export type RowDiff = Record<string, { before: unknown; after: unknown }>;

/**
 * One committed change to one entry of a guild's settings: which entry, what was done, the entry
 * before and after with the columns that changed, who did it through which session or API token,
 * and when. `revision` counts up per guild and never repeats; it is written in the same transaction
 * as the change, under the guild's settings lock.
 */
@Entity({ name: 'settings_revisions' })
@Index('settings_revisions_setting_idx', ['guild_id', 'setting', 'revision'])
@Index('settings_revisions_author_idx', ['guild_id', 'user_id', 'revision'])
@Index('settings_revisions_key_idx', ['guild_id', 'setting', 'key'])
@Index('settings_revisions_created_idx', ['guild_id', 'created_at'])
export class SettingsRevisionEntity {
  @PrimaryColumn({ type: 'varchar', length: 20 })
  guild_id!: string;

  @PrimaryColumn({ type: 'integer' })
  revision!: number;

  @Column({ type: 'varchar', length: 64 })
  setting!: string;

  /** The entry's primary key, `{column: value}` (null on records from before revisions). */
  @Column({ type: 'jsonb', nullable: true })
  key!: Record<string, unknown> | null;

  @Column({ type: 'varchar', length: 16 })
  operation!: RevisionOperation;

  /** The entry before the change (null: it did not exist). */
  @Column({ type: 'jsonb', nullable: true })
  before!: Record<string, unknown> | null;

  /** The entry after the change (null: it no longer exists). */
  @Column({ type: 'jsonb', nullable: true })
  after!: Record<string, unknown> | null;

  /** The columns whose value changed (null on records from before revisions). */
  @Column({ type: 'jsonb', nullable: true })
  diff!: RowDiff | null;

  @Column({ type: 'varchar', length: 20 })
  user_id!: string;

  /** The session or API token the change was made with (null: made by an operator's CLI). */
  @Column({ type: 'uuid', nullable: true })
  session_id!: string | null;

  @Column({ type: 'varchar', length: 8, nullable: true })
  session_type!: SessionType | null;

  /** The revision this one undid (a rollback), else null. */
  @Column({ type: 'integer', nullable: true })
  reverts!: number | null;

  @Column({ type: 'timestamptz' })
  created_at!: Date;
}
