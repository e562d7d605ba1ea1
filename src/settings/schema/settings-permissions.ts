import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { GuildContext } from 'src/guilds/guild-context';

/**
 * What the settings engine needs of the bot's permission model: who holds which permission string
 * in a guild, and the data a setting's own rule judges. The engine checks every operation through
 * it; the permission model (`src/permissions/`) provides it (`SettingsPermissions`), and its own
 * settings (`guildroles`, `guildmembers`) judge the data declared here.
 */

/** A role's stored permission entry (`guildroles`). */
export interface RoleEntry {
  index: number;
  perms: readonly string[];
}

/** A guild's permission data: its owner, its Discord roles and their stored entries. */
export interface PermissionGuild {
  ownerId: string;
  /** The guild's Discord roles. */
  roles: readonly { id: string; position: number }[];
  /** The stored `guildroles` entries by role id. */
  entries: ReadonlyMap<string, RoleEntry>;
}

/** A member's permission data in a guild. */
export interface PermissionMember {
  userId: string;
  /** The member's Discord role ids, in the member's order. */
  roles: readonly string[];
  /** The member's stored `guildmembers` overrides. */
  overrides: readonly string[];
  /**
   * When the member acts through a scoped API token: the permission strings it is limited to,
   * intersected with the member's own. Absent otherwise.
   */
  scope?: readonly string[];
}

/**
 * Where permission data is read through: a cache (the settings engine passes its per-guild cache,
 * whose version moves with every settings write).
 */
export interface PermissionReads {
  get<T>(key: string, loader: () => Promise<T>): Promise<T>;
}

/**
 * The stored rows as one settings change sees them, its own writes applied (the engine's
 * `ChangeState`): permission data read through it holds when the change is stored.
 */
export interface ChangeRows {
  all<T extends ObjectLiteral>(entity: EntityTarget<T>): Promise<T[]>;
  row(
    entity: EntityTarget<ObjectLiteral>,
    key: Record<string, unknown>,
  ): Promise<ObjectLiteral | null>;
  /** How many writes the change has made to `entity`. */
  changesIn(entity: EntityTarget<ObjectLiteral>): number;
}

/** Who asks: a user, and the permission strings of the API token they use, if it has a scope. */
export interface PermissionCaller {
  userId: string;
  scope?: readonly string[];
}

/** A caller's permission data in a guild, as `resolve` gives it. */
export interface ResolvedCaller {
  context: GuildContext;
  guild: PermissionGuild;
  /** The caller as a member (none of a non-member's stored overrides), with a token's scope. */
  author: PermissionMember;
  /** A non-member holds no permission strings, whatever is stored for them. */
  isMember: boolean;
}

/** What a caller may do in a guild: a test of one permission string, and a refusal. */
export interface PermissionTest {
  (permission: string): boolean;
  /** Throws 403 `Restricted` saying what is missing, unless the caller holds `permission`. */
  require(permission: string): void;
}

/**
 * The permission model as the engine uses it, and its injection token: the module that owns the
 * model provides it (`{ provide: SettingsPermissions, useExisting: … }`) to every module.
 */
export abstract class SettingsPermissions {
  /**
   * The caller's permission data in the guild, read through `reads`. Throws the guild lookup's
   * errors (404 when the bot is not in the guild).
   */
  abstract resolve(
    guildId: string,
    caller: PermissionCaller,
    reads: PermissionReads,
  ): Promise<ResolvedCaller>;

  /** What a resolved caller may do. */
  abstract testFor(caller: ResolvedCaller): PermissionTest;

  /** 403 `Restricted` unless the caller holds `permission`. */
  abstract require(caller: ResolvedCaller, permission: string): void;

  /** The guild's permission data as a settings change sees it (its own writes applied). */
  abstract guildIn(context: GuildContext, rows: ChangeRows): Promise<PermissionGuild>;

  /** A member's permission data as a settings change sees it (see `guildIn`). */
  abstract memberIn(
    userId: string,
    discordRoles: readonly string[],
    rows: ChangeRows,
  ): Promise<PermissionMember>;
}
