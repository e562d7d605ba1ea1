import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** What a moderator did; a case records one of these. */
export const CASE_ACTIONS = ['note', 'warn', 'mute', 'unmute', 'kick', 'ban', 'unban'] as const;
export type CaseAction = (typeof CASE_ACTIONS)[number];

/** A case's reason, in characters (Zeppelin's and YAGPDB's logs keep reasons of this order). */
export const MAX_REASON_LENGTH = 1000;

/**
 * One moderation case of a guild: who was acted on, by whom, how and why. Numbered per guild from
 * 1 (`number`, what moderators call "case 12"); never changed once recorded.
 */
@Entity('moderation_cases')
@Check(
  'moderation_cases_action_check',
  `"action" IN (${CASE_ACTIONS.map((a) => `'${a}'`).join(', ')})`,
)
// The user filter reads one user's cases, newest first.
@Index('moderation_cases_user_idx', ['guildId', 'userId', 'number'])
export class ModerationCaseEntity {
  @PrimaryColumn({ name: 'guild_id', type: 'varchar', length: 20 })
  guildId!: string;

  @PrimaryColumn({ type: 'integer' })
  number!: number;

  @Column({ name: 'user_id', type: 'varchar', length: 20 })
  userId!: string;

  @Column({ name: 'moderator_id', type: 'varchar', length: 20 })
  moderatorId!: string;

  @Column({ type: 'varchar', length: 16 })
  action!: CaseAction;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/** The last case number given in each guild: the next case takes the one after it. */
@Entity('moderation_case_counters')
export class ModerationCaseCounterEntity {
  @PrimaryColumn({ name: 'guild_id', type: 'varchar', length: 20 })
  guildId!: string;

  @Column({ name: 'last_number', type: 'integer' })
  lastNumber!: number;
}
