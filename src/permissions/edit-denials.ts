import type { EditCheck, EditDenial } from 'src/permissions/edit-checks';
import type { Authorization } from 'src/settings/schema/settings-definition';

/** An edit check as a setting's rule answers the settings engine: refused with what the caller is told. */
export function authorizationOf(check: EditCheck): Authorization {
  return check.allowed ? check : { allowed: false, message: denialMessage(check.denial) };
}

/** What each edit-check refusal (kittycat-rules.md §10) tells the caller. */
export function denialMessage(denial: EditDenial): string {
  switch (denial.reason) {
    case 'missing_perm':
      return `You need the permission ${denial.permission} in this guild`;
    case 'patch':
      return denial.patch.error === 'NoPermission'
        ? `You cannot grant or remove ${denial.patch.permission}: you do not hold it`
        : `You cannot change ${denial.patch.wildcard} unless the entry keeps ${denial.patch.negator}, which limits you`;
    case 'no_discord_roles':
      return 'You need a Discord role in this guild to manage role permissions';
    case 'role_not_in_guild':
      return 'That role is not a role of this guild';
    case 'role_has_no_entry':
      return 'That role has no permission entry';
    case 'discord_hierarchy':
      return 'Your highest Discord role must be above that role';
    case 'new_index_not_below_author':
      return 'The index must rank below your own (a higher number than yours)';
    case 'current_index_above_author':
      return 'That entry ranks at or above your own';
    case 'target_outranks_author':
      return 'That member ranks above you';
    default:
      return unknownReason(denial);
  }
}

/**
 * Every reason is handled above (the compiler checks it: `never`); a rule built outside
 * TypeScript's checks still gets an answer with a message.
 */
function unknownReason(denial: never): string {
  void denial;
  return 'Not allowed';
}
