/** What each edit-check refusal (kittycat-rules.md §10) tells the caller. */
const MESSAGES: Readonly<Record<string, string>> = {
  no_discord_roles: 'You need a Discord role in this guild to manage role permissions',
  role_not_in_guild: 'That role is not a role of this guild',
  role_has_no_entry: 'That role has no permission entry',
  discord_hierarchy: 'Your highest Discord role must be above that role',
  new_index_not_below_author: 'The index must rank below your own (a higher number than yours)',
  current_index_above_author: 'That entry ranks at or above your own',
  target_outranks_author: 'That member ranks above you',
};

export function denialMessage(code: string): string {
  if (code.startsWith('missing_perm:')) {
    return `You need the permission ${code.slice('missing_perm:'.length)} in this guild`;
  }
  if (code.startsWith('patch:NoPermission:')) {
    return `You cannot grant or remove ${code.slice('patch:NoPermission:'.length)}: you do not hold it`;
  }
  if (code.startsWith('patch:LacksNegatorForWildcard:')) {
    const [wildcard, negator] = code.slice('patch:LacksNegatorForWildcard:'.length).split(':');
    return `You cannot change ${wildcard} unless the entry keeps ${negator}, which limits you`;
  }
  return MESSAGES[code] ?? 'Not allowed';
}
