import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { UserEntity } from 'src/users/user.entity';
import type { SessionType } from 'src/common/auth/authenticated-session';

export type { SessionType };
export type SessionState = 'active' | 'banned';

/** A login session or an API token. Only the SHA-256 of its token is stored. */
@Entity({ name: 'sessions' })
@Check('sessions_type_check', `"type" IN ('login', 'api')`)
@Check('sessions_state_check', `"state" IN ('active', 'banned')`)
@Index('sessions_user_created_idx', ['userId', 'createdAt'])
@Index('sessions_expires_at_idx', ['expiresAt'])
export class SessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  /** The user's snowflake, as `users.id` holds it (`numeric(20,0)`). */
  @Column({ name: 'user_id', type: 'numeric', precision: 20, scale: 0 })
  userId!: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: UserEntity;

  @Column({ type: 'varchar', length: 16 })
  type!: SessionType;

  @Column({ type: 'varchar', length: 64, nullable: true })
  name!: string | null;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  state!: SessionState;

  /** SHA-256 of the token (32 bytes). */
  @Index('sessions_token_hash_key', { unique: true })
  @Column({ name: 'token_hash', type: 'bytea' })
  tokenHash!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  /** API tokens only: the guilds the token may act in; null for no such limit. */
  @Column({ name: 'scope_guilds', type: 'text', array: true, nullable: true })
  scopeGuilds!: string[] | null;

  /** API tokens only: the permission strings the token may use; null for no such limit. */
  @Column({ name: 'scope_permissions', type: 'text', array: true, nullable: true })
  scopePermissions!: string[] | null;
}
