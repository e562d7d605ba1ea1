import type { EditDenial } from 'src/permissions/edit-checks';
import { denialMessage } from 'src/permissions/edit-denials';

describe('what a refused edit tells the caller', () => {
  it.each<[EditDenial, string]>([
    [
      { reason: 'missing_perm', permission: 'guildroles.update' },
      'You need the permission guildroles.update in this guild',
    ],
    [
      { reason: 'patch', patch: { ok: false, error: 'NoPermission', permission: 'apps.deploy' } },
      'You cannot grant or remove apps.deploy: you do not hold it',
    ],
    [
      {
        reason: 'patch',
        patch: {
          ok: false,
          error: 'LacksNegatorForWildcard',
          wildcard: 'rpc.*',
          negator: '~rpc.ban',
        },
      },
      'You cannot change rpc.* unless the entry keeps ~rpc.ban, which limits you',
    ],
    [
      { reason: 'no_discord_roles' },
      'You need a Discord role in this guild to manage role permissions',
    ],
    [{ reason: 'role_not_in_guild' }, 'That role is not a role of this guild'],
    [{ reason: 'role_has_no_entry' }, 'That role has no permission entry'],
    [{ reason: 'discord_hierarchy' }, 'Your highest Discord role must be above that role'],
    [
      { reason: 'new_index_not_below_author' },
      'The index must rank below your own (a higher number than yours)',
    ],
    [{ reason: 'current_index_above_author' }, 'That entry ranks at or above your own'],
    [{ reason: 'target_outranks_author' }, 'That member ranks above you'],
  ])('%j', (denial, message) => {
    expect(denialMessage(denial)).toBe(message);
  });
});

it('answers a reason it does not know with a message still', () => {
  expect(denialMessage({ reason: 'custom_rule' } as unknown as EditDenial)).toBe('Not allowed');
});
