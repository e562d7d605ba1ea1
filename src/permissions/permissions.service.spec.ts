import type { PermissionGuild, PermissionMember } from 'src/settings/schema/settings-permissions';
import { hasPerm } from 'src/permissions/permission-string';
import { PermissionsService } from 'src/permissions/permissions.service';

/** A guild whose two roles carry the given permission strings. */
function guild(moderator: string[], helper: string[]): PermissionGuild {
  return {
    ownerId: '1',
    roles: [
      { id: '20', position: 2 },
      { id: '21', position: 1 },
    ],
    entries: new Map([
      ['20', { index: 1, perms: moderator }],
      ['21', { index: 2, perms: helper }],
    ]),
  };
}

const MEMBER: PermissionMember = { userId: '5', roles: ['20', '21'], overrides: [] };
const QUESTIONS = ['lockdown.create', 'lockdown.delete', 'rpc.ban', 'guildroles.view', 'x.y'];

describe('PermissionsService.holds', () => {
  const service = new PermissionsService(null as never, null as never, null as never);

  it.each([
    ['role grants', ['lockdown.*'], ['rpc.ban']],
    ['a negator in a higher entry', ['~lockdown.delete', 'lockdown.*'], []],
    ['the global wildcard', ['global.*'], ['~rpc.ban']],
    ['nothing', [], []],
  ])('answers as hasPerm on the resolved permissions: %s', (_case, moderator, helper) => {
    const state = guild(moderator, helper);
    const resolved = service.resolved(state, MEMBER);
    for (const question of QUESTIONS) {
      const expected = hasPerm(resolved, question);
      expect(service.holds(state, MEMBER, question)).toBe(expected);
      // Asked again: the remembered answer.
      expect(service.holds(state, { ...MEMBER }, question)).toBe(expected);
    }
  });

  it('answers afresh for a new guild state, a scope or another member', () => {
    expect(service.holds(guild(['lockdown.*'], []), MEMBER, 'lockdown.create')).toBe(true);
    expect(service.holds(guild([], []), MEMBER, 'lockdown.create')).toBe(false);
    const state = guild(['lockdown.*'], []);
    expect(service.holds(state, { ...MEMBER, scope: ['rpc.*'] }, 'lockdown.create')).toBe(false);
    expect(service.holds(state, { ...MEMBER, roles: ['21'] }, 'lockdown.create')).toBe(false);
    expect(service.holds(state, MEMBER, 'lockdown.create')).toBe(true);
  });
});
