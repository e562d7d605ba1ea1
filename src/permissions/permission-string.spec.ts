import fc from 'fast-check';
import {
  describeEditCheck,
  verifyMemberOverrideChange,
  verifyRoleEntryChange,
  type RoleEdit,
} from 'src/permissions/edit-checks';
import type { PermissionGuild, PermissionMember } from 'src/settings/schema/settings-permissions';
import {
  canonicalList,
  checkPatchChanges,
  describePatchCheck,
  hasPerm,
  intersectPermissions,
  resolvePermissions,
  type Position,
} from 'src/permissions/permission-string';
import vectors from 'test/vectors/permission-string-vectors.json';

interface Case<I, E> {
  id: string;
  input: I;
  expected: E;
}
const table = <I, E>(cases: Case<I, E>[]): [string, Case<I, E>][] => cases.map((c) => [c.id, c]);

describe('permission strings: has_perm', () => {
  it.each(table(vectors.has_perm as Case<{ perms: string[]; perm: string }, boolean>[]))(
    '%s',
    (_id, { input, expected }) => {
      expect(hasPerm(input.perms, input.perm)).toBe(expected);
    },
  );
});

describe('permission strings: resolve', () => {
  it.each(
    table(vectors.resolve as Case<{ positions: Position[]; overrides: string[] }, string[]>[]),
  )('%s', (_id, { input, expected }) => {
    expect(resolvePermissions(input.positions, input.overrides)).toEqual(expected);
  });
});

describe('permission strings: resolve on large inputs', () => {
  // A namespace wildcard or @clear used to rescan every held permission: quadratic, minutes here.
  it('resolves 100,000 permissions with wildcards and @clear throughout', () => {
    const keep = (p: number, i: number): string => `keep${p}.perm${i}`;
    const positions: Position[] = Array.from({ length: 1000 }, (_, p) => ({
      id: `role${p}`,
      index: 1000 - p,
      perms: Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0 ? keep(p, i) : i % 4 === 1 ? 'x.*' : 'x.@clear',
      ),
    }));
    const kept = positions.flatMap((_, p) => Array.from({ length: 50 }, (_, i) => keep(p, 2 * i)));
    expect(resolvePermissions(positions, ['~x.y'])).toEqual([...kept, '~x.y']);
  });
});

describe('permission strings: check_patch_changes', () => {
  it.each(
    table(
      vectors.check_patch_changes as Case<
        { manager: string[]; current: string[]; new: string[] },
        string
      >[],
    ),
  )('%s', (_id, { input, expected }) => {
    expect(describePatchCheck(checkPatchChanges(input.manager, input.current, input.new))).toBe(
      expected,
    );
  });
});

interface HierarchyInput {
  check: 'role' | 'member';
  op: 'View' | 'Create' | 'Update' | 'Delete' | 'Reorder';
  guild_owner_id: string;
  guild_roles: { id: string; position: number }[];
  role_perms: Record<string, { index: number; perms: string[] }>;
  author: string;
  author_roles: string[];
  author_overrides: string[];
  roleid?: string;
  index?: number;
  perms?: string[];
  reorder?: { role_id: string; index: number }[];
  target?: string;
  target_roles?: string[];
  target_overrides?: string[];
  perm_overrides?: string[];
}

function roleEdit(input: HierarchyInput): RoleEdit {
  switch (input.op) {
    case 'View':
      return { op: 'View' };
    case 'Reorder':
      return {
        op: 'Reorder',
        items: (input.reorder ?? []).map((item) => ({ roleId: item.role_id, index: item.index })),
      };
    case 'Delete':
      return { op: 'Delete', roleId: input.roleid ?? '' };
    default:
      return {
        op: input.op,
        roleId: input.roleid ?? '',
        index: input.index ?? 0,
        perms: input.perms ?? [],
      };
  }
}

describe('permission strings: edit checks (hierarchy)', () => {
  it.each(table(vectors.hierarchy as Case<HierarchyInput, string>[]))(
    '%s',
    (_id, { input, expected }) => {
      const guild: PermissionGuild = {
        ownerId: input.guild_owner_id,
        roles: input.guild_roles,
        entries: new Map(Object.entries(input.role_perms)),
      };
      const author: PermissionMember = {
        userId: input.author,
        roles: input.author_roles,
        overrides: input.author_overrides,
      };
      const result =
        input.check === 'role'
          ? verifyRoleEntryChange(guild, author, roleEdit(input))
          : verifyMemberOverrideChange(
              guild,
              author,
              {
                userId: input.target ?? '',
                roles: input.target_roles ?? [],
                overrides: input.target_overrides ?? [],
              },
              input.op === 'Delete'
                ? { op: 'Delete' }
                : input.op === 'View'
                  ? { op: 'View' }
                  : { op: input.op as 'Create' | 'Update', overrides: input.perm_overrides ?? [] },
            );
      expect(describeEditCheck(result)).toBe(expected);
    },
  );
});

describe('permission strings: canonical lists', () => {
  it('stores each permission once, in canonical form, in first-seen order', () => {
    expect(canonicalList(['test', 'rpc.kick', 'global.test', '~ban', 'rpc.kick'])).toEqual([
      'global.test',
      'rpc.kick',
      '~global.ban',
    ]);
  });
});

describe('permission strings: intersect (an API token scope)', () => {
  it.each([
    [
      ['guildroles.view', 'guildroles.create'],
      ['guildroles.*'],
      ['guildroles.view', 'guildroles.create'],
    ],
    [['guildroles.*'], ['guildroles.view'], ['guildroles.view']],
    [['global.*'], ['protection.view'], ['protection.view']],
    [['protection.view'], ['global.*'], ['protection.view']],
    [['global.view'], ['settings_history.*'], ['settings_history.view']],
    [
      ['guildroles.*', '~guildroles.delete'],
      ['guildroles.*'],
      ['guildroles.*', '~guildroles.delete'],
    ],
    [['guildroles.view'], ['protection.view'], []],
    [
      ['guildroles.*'],
      ['guildroles.*', '~guildroles.create'],
      ['guildroles.*', '~guildroles.create'],
    ],
  ])('%j ∩ %j = %j', (a, b, expected) => {
    expect(intersectPermissions(a, b)).toEqual(expected);
  });

  it('grants exactly what both lists grant, for any lists and query', () => {
    const namespace = fc.constantFrom('global', 'guildroles', 'protection');
    const perm = fc.constantFrom('*', 'view', 'create', 'delete');
    const text = fc
      .tuple(fc.boolean(), namespace, perm)
      .map(([negator, ns, p]) => `${negator ? '~' : ''}${ns}.${p}`);
    const query = fc
      .tuple(fc.constantFrom('guildroles', 'protection', 'lockdown'), perm)
      .map(([ns, p]) => `${ns}.${p}`);
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 6 }),
        fc.array(text, { maxLength: 6 }),
        query,
        (a, b, q) => {
          expect(hasPerm(intersectPermissions(a, b), q)).toBe(hasPerm(a, q) && hasPerm(b, q));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
