import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import type { MemberLike } from 'src/guilds/platform-permissions';
import {
  canActOn,
  canAssignRole,
  compareRoles,
  highestHeldRole,
  highestRole,
  sortRolesByHierarchy,
  type HierarchyRole,
} from 'src/guilds/role-hierarchy';

const GUILD = '1000000000000000000';
const OWNER = '2000000000000000001';
const roles: HierarchyRole[] = [
  { id: GUILD, permissions: '0', position: 0 },
  { id: '3000000000000000001', permissions: P.Administrator.toString(), position: 5 },
  { id: '3000000000000000002', permissions: P.ManageRoles.toString(), position: 3 },
  // Same position as ...003 but younger: ranks lower.
  { id: '3000000000000000009', permissions: '0', position: 2 },
  { id: '3000000000000000003', permissions: '0', position: 2 },
  { id: '3000000000000000004', permissions: '0', position: 1, managed: true },
];
const guild = { id: GUILD, owner_id: OWNER, roles };
const member = (id: string, roleIds: string[]): MemberLike => ({
  user: { id },
  roles: roleIds,
});

describe('role order', () => {
  it.each([
    ['higher position ranks higher', roles[1], roles[2], 1],
    ['lower position ranks lower', roles[2], roles[1], -1],
    ['equal position: the older id ranks higher', roles[4], roles[3], 1],
    ['equal position: the younger id ranks lower', roles[3], roles[4], -1],
    ['a role equals itself', roles[2], roles[2], 0],
  ])('%s', (_name, a, b, sign) => {
    expect(Math.sign(compareRoles(a, b))).toBe(sign);
  });

  it('compares ids as numbers, not as strings', () => {
    const short = { id: '999999999999999999', permissions: '0', position: 1 };
    const long = { id: '1000000000000000000', permissions: '0', position: 1 };
    expect(compareRoles(short, long)).toBeGreaterThan(0);
  });

  it('sorts from the highest role down to @everyone', () => {
    expect(sortRolesByHierarchy(roles).map((r) => r.id)).toEqual([
      '3000000000000000001',
      '3000000000000000002',
      '3000000000000000003',
      '3000000000000000009',
      '3000000000000000004',
      GUILD,
    ]);
  });

  it.each([
    ['no roles: @everyone', [], GUILD],
    ['unknown ids are ignored', ['42'], GUILD],
    ['the best of several', ['3000000000000000009', '3000000000000000002'], '3000000000000000002'],
    ['tie broken by age', ['3000000000000000009', '3000000000000000003'], '3000000000000000003'],
  ])('highest role: %s', (_name, held, expected) => {
    expect(highestRole(guild, held).id).toBe(expected);
  });

  it.each([
    ['no roles: none', [], undefined],
    ['unknown ids are ignored', ['42'], undefined],
    ['@everyone only when listed', [GUILD], GUILD],
    ['the best of several', ['3000000000000000009', '3000000000000000002'], '3000000000000000002'],
    ['tie broken by age', ['3000000000000000009', '3000000000000000003'], '3000000000000000003'],
  ])('highest held role: %s', (_name, held, expected) => {
    expect(highestHeldRole(roles, held)?.id).toBe(expected);
  });

  it('takes the highest held role of a guild whose data lacks @everyone, and throws only with none', () => {
    const partial = { ...guild, roles: roles.filter((role) => role.id !== GUILD) };
    expect(highestRole(partial, ['3000000000000000003']).id).toBe('3000000000000000003');
    expect(() => highestRole(partial, [])).toThrow(`guild ${GUILD} has no @everyone role`);
  });
});

describe('acting on members', () => {
  const admin = member('2000000000000000002', ['3000000000000000001']);
  const manager = member('2000000000000000003', ['3000000000000000002']);
  const peer = member('2000000000000000004', ['3000000000000000002']);
  const plain = member('2000000000000000005', []);
  const owner = member(OWNER, []);

  it.each([
    ['the owner on anyone', owner, admin, true],
    ['a higher role on a lower one', admin, manager, true],
    ['a role on an equal role', manager, peer, false],
    ['a lower role on a higher one', manager, admin, false],
    ['an administrator on the owner', admin, owner, false],
    ['anyone on themselves', manager, manager, false],
    ['a member with roles on one without', manager, plain, true],
  ])('%s', (_name, actor, target, allowed) => {
    expect(canActOn(guild, actor, target).allowed).toBe(allowed);
  });

  it('says why it refuses', () => {
    expect(canActOn(guild, manager, peer)).toEqual({
      allowed: false,
      reason: "The target's highest role (3000000000000000002) is not below the actor's",
    });
  });
});

describe('assigning roles', () => {
  const byId = (id: string): HierarchyRole => roles.find((r) => r.id === id) as HierarchyRole;
  const admin = member('2000000000000000002', ['3000000000000000001']);
  const manager = member('2000000000000000003', ['3000000000000000002']);
  const lowManager = member('2000000000000000006', ['3000000000000000003']);
  const owner = member(OWNER, []);

  it.each([
    ['manager assigns a lower role', manager, '3000000000000000003', true],
    ['manager cannot assign their own top role', manager, '3000000000000000002', false],
    ['manager cannot assign a higher role', manager, '3000000000000000001', false],
    ['without Manage Roles nothing', lowManager, '3000000000000000009', false],
    ['administrator holds Manage Roles', admin, '3000000000000000002', true],
    ['administrator does not bypass the hierarchy', admin, '3000000000000000001', false],
    ['owner assigns any unmanaged role', owner, '3000000000000000001', true],
    ['nobody assigns a managed role', owner, '3000000000000000004', false],
    ['nobody assigns @everyone', owner, GUILD, false],
  ])('%s', (_name, actor, roleId, allowed) => {
    expect(canAssignRole(guild, actor, byId(roleId)).allowed).toBe(allowed);
  });
});
