import {
  describeEditCheck,
  lowestIndex,
  memberPermissions,
  verifyMemberOverrideChange,
  verifyRoleEntryChange,
} from 'src/permissions/edit-checks';
import type { PermissionGuild, PermissionMember } from 'src/settings/schema/settings-permissions';

/** The cases where this service deliberately differs from the original (kittycat-rules.md preface). */
const guild: PermissionGuild = {
  ownerId: '1',
  roles: [
    { id: '100', position: 10 },
    { id: '200', position: 8 },
    { id: '300', position: 5 },
    // Equal positions: "99" is the older snowflake, so it ranks above "100" as a number.
    { id: '99', position: 3 },
    { id: '1000', position: 3 },
  ],
  entries: new Map([
    ['100', { index: 1, perms: ['guildroles.*', 'rpc.*'] }],
    ['200', { index: 2, perms: ['guildroles.*', 'guildmembers.*', 'rpc.*'] }],
    ['300', { index: 4, perms: ['rpc.view'] }],
    ['99', { index: 5, perms: ['guildroles.*'] }],
    ['1000', { index: 6, perms: ['rpc.view'] }],
  ]),
};
const member = (userId: string, roles: string[], overrides: string[] = []): PermissionMember => ({
  userId,
  roles,
  overrides,
});
const moderator = member('10', ['200']);

describe('edit checks: where this service fixes the original', () => {
  it('refuses a Reorder that demotes a more senior entry', () => {
    // The original let index 1 (senior to the author's 2) be moved to 7.
    const result = verifyRoleEntryChange(guild, moderator, {
      op: 'Reorder',
      items: [{ roleId: '100', index: 7 }],
    });
    expect(describeEditCheck(result)).toBe('deny:discord_hierarchy');
  });

  it('refuses a Reorder of an entry above the author even when its role ranks below', () => {
    const senior: PermissionGuild = {
      ...guild,
      entries: new Map([...guild.entries, ['300', { index: 1, perms: ['rpc.view'] }]]),
    };
    const result = verifyRoleEntryChange(senior, moderator, {
      op: 'Reorder',
      items: [{ roleId: '300', index: 7 }],
    });
    expect(describeEditCheck(result)).toBe('deny:current_index_above_author');
  });

  it('allows a Reorder of junior entries to junior places', () => {
    const result = verifyRoleEntryChange(guild, moderator, {
      op: 'Reorder',
      items: [
        { roleId: '300', index: 3 },
        { roleId: '1000', index: 6 },
      ],
    });
    expect(result).toEqual({ allowed: true });
  });

  it('checks the overrides a member Create replaces', () => {
    const author = member('10', ['200']);
    // The target holds a permission the author does not have: replacing it is removing it.
    const target = member('20', [], ['apps.deploy']);
    const result = verifyMemberOverrideChange(guild, author, target, {
      op: 'Create',
      overrides: ['rpc.view'],
    });
    expect(describeEditCheck(result)).toBe('deny:patch:NoPermission:apps.deploy');
  });

  it('orders equal role positions by snowflake as a number', () => {
    // The author's top role "99" is older than "1000" at the same position, so it ranks higher.
    const author = member('30', ['99']);
    const result = verifyRoleEntryChange(guild, author, {
      op: 'Update',
      roleId: '1000',
      index: 7,
      perms: ['rpc.view'],
    });
    expect(result).toEqual({ allowed: true });
  });
});

describe('a member in a guild', () => {
  it('resolves the owner to global.*', () => {
    expect(memberPermissions(guild, member('1', []))).toContain('global.*');
  });

  it('ranks by the most senior entry, +∞ without one', () => {
    expect(lowestIndex(guild, member('10', ['300', '200']))).toBe(2);
    expect(lowestIndex(guild, member('11', ['555']))).toBe(Infinity);
  });
});
