import { PermissionFlagsBits } from 'discord-api-types/v10';
import {
  basePermissions,
  hasPermission,
  type GuildLike,
  type MemberLike,
  type RoleLike,
} from 'src/guilds/platform-permissions';

/**
 * Role order and the hierarchy rules of discord-domain.md §3: a higher position ranks higher; at
 * equal positions the older (numerically smaller) snowflake ranks higher. The owner bypasses the
 * hierarchy; ADMINISTRATOR does not.
 */

export interface HierarchyRole extends RoleLike {
  managed?: boolean;
}

/** What ranks a role: its position, then its id. */
export interface RankedRole {
  readonly id: string;
  readonly position: number;
}

/** Positive when `a` ranks above `b`, negative when below, 0 for the same role. */
export function compareRoles(a: RankedRole, b: RankedRole): number {
  if (a.position !== b.position) return a.position - b.position;
  const idA = BigInt(a.id);
  const idB = BigInt(b.id);
  return idA === idB ? 0 : idA < idB ? 1 : -1;
}

/** The roles from the highest-ranking down to @everyone. */
export function sortRolesByHierarchy<T extends RankedRole>(roles: readonly T[]): T[] {
  return [...roles].sort((a, b) => compareRoles(b, a));
}

/** The highest-ranking of the roles the member holds (@everyone aside); undefined for none. */
export function highestHeldRole<T extends RankedRole>(
  roles: readonly T[],
  memberRoles: readonly string[],
): T | undefined {
  const held = new Set(memberRoles);
  let highest: T | undefined;
  for (const role of roles) {
    if (!held.has(role.id)) continue;
    if (!highest || compareRoles(role, highest) > 0) highest = role;
  }
  return highest;
}

/** The member's highest-ranking role; @everyone for a member without roles. */
export function highestRole<T extends RoleLike>(
  guild: GuildLike & { roles: readonly T[] },
  memberRoles: readonly string[],
): T {
  const roles: readonly T[] = guild.roles;
  const everyone = roles.find((role) => role.id === guild.id);
  const held = highestHeldRole(roles, memberRoles);
  const highest = held && (!everyone || compareRoles(held, everyone) > 0) ? held : everyone;
  if (!highest) throw new Error(`guild ${guild.id} has no @everyone role`);
  return highest;
}

export type HierarchyCheck = { allowed: true } | { allowed: false; reason: string };

const ALLOWED: HierarchyCheck = { allowed: true };
const refuse = (reason: string): HierarchyCheck => ({ allowed: false, reason });

/**
 * Whether `actor` may act on `target` (kick, ban, time out, edit): never on the owner or on
 * oneself, and only on members whose highest role ranks strictly below the actor's.
 */
export function canActOn(guild: GuildLike, actor: MemberLike, target: MemberLike): HierarchyCheck {
  if (target.user.id === actor.user.id) return refuse('A member cannot act on themselves');
  if (target.user.id === guild.owner_id) return refuse('Nobody can act on the guild owner');
  if (actor.user.id === guild.owner_id) return ALLOWED;
  const actorTop = highestRole(guild, actor.roles);
  const targetTop = highestRole(guild, target.roles);
  return compareRoles(actorTop, targetTop) > 0
    ? ALLOWED
    : refuse(`The target's highest role (${targetTop.id}) is not below the actor's`);
}

/**
 * Whether `actor` may assign or remove `role`: it needs MANAGE_ROLES, the role must rank strictly
 * below the actor's highest role (unless the actor owns the guild), and @everyone and managed roles
 * (bots, integrations, boosters) cannot be assigned by hand.
 */
export function canAssignRole(
  guild: GuildLike,
  actor: MemberLike,
  role: HierarchyRole,
): HierarchyCheck {
  if (role.id === guild.id) return refuse('@everyone cannot be assigned');
  if (role.managed) return refuse(`Role ${role.id} is managed by an integration`);
  if (actor.user.id === guild.owner_id) return ALLOWED;
  if (!hasPermission(basePermissions(guild, actor), PermissionFlagsBits.ManageRoles)) {
    return refuse('Managing roles needs the Manage Roles permission');
  }
  return compareRoles(highestRole(guild, actor.roles), role) > 0
    ? ALLOWED
    : refuse(`Role ${role.id} is not below the actor's highest role`);
}
