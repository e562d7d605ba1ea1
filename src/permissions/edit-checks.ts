import { compareRoles, highestHeldRole } from 'src/guilds/role-hierarchy';
import {
  checkPatchChanges,
  describePatchCheck,
  hasPerm,
  intersectPermissions,
  type PatchCheck,
  type Position,
  resolvePermissions,
} from 'src/permissions/permission-string';
import type { PermissionGuild, PermissionMember } from 'src/settings/schema/settings-permissions';

/**
 * Who may edit role entries (`guildroles`) and member overrides (`guildmembers`): the checks of
 * kittycat-rules.md §7, with the fixes its preface lists (Reorder also applies the Discord
 * hierarchy and the current-index rule to every moved entry; Create of member overrides checks the
 * overrides it replaces; equal role positions are ordered by snowflake as a number).
 */

/** Why an edit is refused (kittycat-rules.md §10): a reason, and what it is about. */
export type EditDenial =
  | {
      reason:
        | 'no_discord_roles'
        | 'role_not_in_guild'
        | 'role_has_no_entry'
        | 'discord_hierarchy'
        | 'new_index_not_below_author'
        | 'current_index_above_author'
        | 'target_outranks_author';
    }
  | { reason: 'missing_perm'; permission: string }
  | { reason: 'patch'; patch: Exclude<PatchCheck, { ok: true }> };

export type EditCheck = { allowed: true } | { allowed: false; denial: EditDenial };

const ALLOW: EditCheck = { allowed: true };
const deny = (denial: EditDenial): EditCheck => ({ allowed: false, denial });
type PlainReason = Exclude<EditDenial, { reason: 'missing_perm' | 'patch' }>['reason'];
const refuse = (reason: PlainReason): EditCheck => deny({ reason });

/** `allow` or `deny:<code>`, as the reference vectors write it. */
export function describeEditCheck(check: EditCheck): string {
  if (check.allowed) return 'allow';
  const { denial } = check;
  switch (denial.reason) {
    case 'missing_perm':
      return `deny:missing_perm:${denial.permission}`;
    case 'patch':
      return `deny:patch:${describePatchCheck(denial.patch)}`;
    default:
      return `deny:${denial.reason}`;
  }
}

/** The entries of the member's roles, in the member's role order (roles without one are skipped). */
export function positionsOf(guild: PermissionGuild, member: PermissionMember): Position[] {
  return member.roles.flatMap((roleId) => {
    const entry = guild.entries.get(roleId);
    return entry ? [{ id: roleId, index: entry.index, perms: entry.perms }] : [];
  });
}

/** The member's overrides; the guild owner also holds `global.*`. */
export function overridesOf(guild: PermissionGuild, member: PermissionMember): string[] {
  return member.userId === guild.ownerId
    ? [...member.overrides, 'global.*']
    : [...member.overrides];
}

/** The member's effective permission strings in the guild. */
export function memberPermissions(guild: PermissionGuild, member: PermissionMember): string[] {
  const own = resolvePermissions(positionsOf(guild, member), overridesOf(guild, member));
  return member.scope ? intersectPermissions(own, member.scope) : own;
}

/** The member's most senior (lowest) entry index; +∞ without entries. */
export function lowestIndex(guild: PermissionGuild, member: PermissionMember): number {
  return Math.min(Infinity, ...positionsOf(guild, member).map((position) => position.index));
}

export type RoleEdit =
  | { op: 'View' }
  | { op: 'Create' | 'Update'; roleId: string; index: number; perms: readonly string[] }
  | { op: 'Delete'; roleId: string }
  | { op: 'Reorder'; items: readonly { roleId: string; index: number }[] };

/** May `author` make this change to the guild's role entries? */
export function verifyRoleEntryChange(
  guild: PermissionGuild,
  author: PermissionMember,
  edit: RoleEdit,
): EditCheck {
  if (edit.op === 'View') return ALLOW;
  if (author.userId === guild.ownerId) {
    if (edit.op === 'Reorder') return ALLOW;
    const current = guild.entries.get(edit.roleId)?.perms ?? [];
    return ownerChange(guild, author, current, edit.op === 'Delete' ? [] : edit.perms);
  }
  const authorTop = highestHeldRole(guild.roles, author.roles);
  if (!authorTop) return refuse('no_discord_roles');
  const manager = memberPermissions(guild, author);
  const lowest = lowestIndex(guild, author);
  const isBelowAuthor = (roleId: string): boolean => {
    const role = guild.roles.find((r) => r.id === roleId);
    return role !== undefined && compareRoles(authorTop, role) > 0;
  };

  if (edit.op === 'Reorder') {
    if (!hasPerm(manager, 'guildroles.reorder'))
      return deny({ reason: 'missing_perm', permission: 'guildroles.reorder' });
    for (const item of edit.items) {
      if (!guild.roles.some((role) => role.id === item.roleId)) return refuse('role_not_in_guild');
      const entry = guild.entries.get(item.roleId);
      if (!entry) return refuse('role_has_no_entry');
      if (entry.index === item.index) continue;
      if (!isBelowAuthor(item.roleId)) return refuse('discord_hierarchy');
      if (item.index <= lowest) return refuse('new_index_not_below_author');
      if (entry.index < lowest) return refuse('current_index_above_author');
    }
    return ALLOW;
  }

  if (!guild.roles.some((role) => role.id === edit.roleId)) {
    // An entry of a role deleted on Discord may always be cleaned up.
    return edit.op === 'Delete' ? ALLOW : refuse('role_not_in_guild');
  }
  if (!isBelowAuthor(edit.roleId)) return refuse('discord_hierarchy');
  const gate = `guildroles.${edit.op.toLowerCase()}`;
  if (!hasPerm(manager, gate)) return deny({ reason: 'missing_perm', permission: gate });
  const stored = guild.entries.get(edit.roleId);

  if (edit.op === 'Create') {
    if (edit.index <= lowest) return refuse('new_index_not_below_author');
    return patch(manager, [], edit.perms);
  }
  if (edit.op === 'Update') {
    if (edit.index <= lowest) return refuse('new_index_not_below_author');
    if (!stored) return refuse('role_has_no_entry');
    if (stored.index < lowest) return refuse('current_index_above_author');
    return patch(manager, stored.perms, edit.perms);
  }
  if (!stored) return refuse('role_has_no_entry');
  if (stored.index <= lowest) return refuse('current_index_above_author');
  return patch(manager, stored.perms, []);
}

export type MemberEdit =
  { op: 'View' } | { op: 'Create' | 'Update'; overrides: readonly string[] } | { op: 'Delete' };

/** May `author` make this change to `target`'s overrides? */
export function verifyMemberOverrideChange(
  guild: PermissionGuild,
  author: PermissionMember,
  target: PermissionMember,
  edit: MemberEdit,
): EditCheck {
  if (edit.op === 'View') return ALLOW;
  if (author.userId === guild.ownerId) {
    const next = edit.op === 'Delete' ? [] : edit.overrides;
    return ownerChange(guild, author, overridesOf(guild, target), next);
  }
  if (lowestIndex(guild, target) < lowestIndex(guild, author)) {
    return refuse('target_outranks_author');
  }
  const manager = memberPermissions(guild, author);
  const gate = `guildmembers.${edit.op.toLowerCase()}`;
  if (!hasPerm(manager, gate)) return deny({ reason: 'missing_perm', permission: gate });
  // Create replaces whatever the target had, so it is checked against that, like Update.
  const next = edit.op === 'Delete' ? [] : edit.overrides;
  return patch(manager, overridesOf(guild, target), next);
}

/**
 * The owner is above the hierarchy and holds every permission. Through a scoped API token, the
 * owner still bypasses the hierarchy but may hand out or take away only what the scope allows:
 * otherwise a token limited to `guildmembers.create` could grant anyone `global.*`.
 */
function ownerChange(
  guild: PermissionGuild,
  author: PermissionMember,
  current: readonly string[],
  next: readonly string[],
): EditCheck {
  return author.scope ? patch(memberPermissions(guild, author), current, next) : ALLOW;
}

function patch(
  manager: readonly string[],
  current: readonly string[],
  next: readonly string[],
): EditCheck {
  const check = checkPatchChanges(manager, current, next);
  return check.ok ? ALLOW : deny({ reason: 'patch', patch: check });
}
