import { DiscoveryService } from '@nestjs/core';
import type { ObjectLiteral } from 'typeorm';
import type { GuildColumnCheck } from 'src/settings/schema/guild-checks';
import type { PermissionGuild, PermissionMember } from 'src/settings/schema/settings-permissions';
import type { ExecutableOperation, SettingSchema } from 'src/settings/schema/settings-schema';

/** A stored row as the API shows it: column id → value. */
export type SettingRow = Record<string, unknown>;

/**
 * A setting's own authorization rule's answer: allowed, or refused (403 `Restricted`) with what the
 * caller is told.
 */
export type Authorization = { allowed: true } | { allowed: false; message: string };

/** What a setting's own authorization rule is told about an operation. */
export interface AuthorizationRequest {
  operation: ExecutableOperation;
  /** The validated fields (read-only values removed). */
  fields: unknown;
  /** The rows the operation changes, as stored before it (empty for Create). */
  current: SettingRow[];
  guild: PermissionGuild;
  author: PermissionMember;
  /** Loads another member's permission data (for rules about a target member). */
  memberOf: (userId: string) => Promise<PermissionMember>;
}

/**
 * A setting as a module declares it: the schema, the TypeORM entity that stores its rows (one
 * property per stored column, named as the column, plus `guild_id`), and what the engine cannot
 * derive from the schema. Everything else (validation, permissions, references, storage, audit)
 * is the engine's.
 */
export interface SettingDefinition {
  /** The group key in `GET /guilds/{id}/settings`: the declaring module. */
  group: string;
  schema: SettingSchema;
  entity: new () => ObjectLiteral;
  /** How View orders rows (default: `index_by`, then the primary key). */
  order?: Record<string, 'ASC' | 'DESC'>;
  /** Discord permissions the bot must hold for the setting to work. */
  botNeeds?: {
    /** Guild-level permissions (e.g. Manage Channels for a lockdown). */
    guild?: bigint;
    /** Permissions in the channel each named column refers to (e.g. a log sink channel). */
    channelColumns?: Record<string, bigint>;
  };
  /**
   * Rules on the values of channel and role columns that look at the live guild, by column id
   * (`{ channel: [textChannel] }`; kit in `guild-checks.ts`). Checked at boot: each names a stored
   * column whose values are of the check's kind.
   */
  guildChecks?: Record<string, readonly GuildColumnCheck[]>;
  /**
   * An entry that works in the demo guild: the example of this setting's Create body (`create`)
   * and of its Update (the created entry's key with `update`'s changes) in the OpenAPI document,
   * and what the test suite runs through Create, View, Update and Delete. Validated at boot
   * against the setting's own Create and Update fields.
   */
  samples?: { create: SettingRow; update: SettingRow };
  /** Rewrites validated fields before they are checked and stored (e.g. canonical permissions). */
  prepare?: (fields: SettingRow) => SettingRow;
  /**
   * A rule beyond `<setting>.<operation>` (e.g. the role hierarchy), judged against the rows as the
   * change sees them (in its transaction, or a dry run's reads); it reads what it is given.
   */
  authorize?(request: AuthorizationRequest): Promise<Authorization> | Authorization;
}

/** Marks a provider whose `definition` the settings engine serves (`@DeclareSetting()`). */
export const DeclareSetting = DiscoveryService.createDecorator<void>();

export interface SettingProvider {
  readonly definition: SettingDefinition;
}
