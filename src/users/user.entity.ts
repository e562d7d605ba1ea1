import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type UserState = 'normal' | 'banned';
export type GrantState = 'active' | 'dead';

/**
 * A platform user who has logged in (or been given an API token). The platform grant (OAuth2
 * tokens) is stored encrypted with AES-256-GCM (`TokenCipher`), never in clear.
 */
@Entity({ name: 'users' })
@Check('users_state_check', `"state" IN ('normal', 'banned')`)
@Check('users_grant_state_check', `"grant_state" IN ('active', 'dead')`)
export class UserEntity {
  /**
   * The platform user id: a snowflake, unsigned 64-bit, so `numeric(20,0)` in the database (signed
   * `bigint` stops at 2^63-1), a decimal string here.
   */
  @PrimaryColumn({ type: 'numeric', precision: 20, scale: 0 })
  id!: string;

  @Column({ type: 'varchar', length: 16, default: 'normal' })
  state!: UserState;

  @Column({ type: 'varchar', length: 64 })
  username!: string;

  @Column({ name: 'global_name', type: 'varchar', length: 64, nullable: true })
  globalName!: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  avatar!: string | null;

  /** Encrypted; null when the user has no grant (API-token-only users, or a revoked grant). */
  @Column({ name: 'grant_access_token', type: 'bytea', nullable: true })
  grantAccessToken!: Buffer | null;

  @Column({ name: 'grant_refresh_token', type: 'bytea', nullable: true })
  grantRefreshToken!: Buffer | null;

  @Column({ name: 'grant_expires_at', type: 'timestamptz', nullable: true })
  grantExpiresAt!: Date | null;

  /** Space-separated OAuth2 scopes of the grant. */
  @Column({ name: 'grant_scopes', type: 'varchar', length: 512, nullable: true })
  grantScopes!: string | null;

  /** `dead` once the platform refused to refresh it: the user must log in again. */
  @Column({ name: 'grant_state', type: 'varchar', length: 16, default: 'active' })
  grantState!: GrantState;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
