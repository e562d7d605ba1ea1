import { GuildRolesSetting } from 'src/permissions/guildroles.setting';
import { rollbackPlan } from 'src/settings/revisions/rollback-plan';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import { normalizeSchema } from 'src/settings/schema/normalize-schema';
import { versionColumn } from 'src/settings/schema/settings-schema';

const declared = new GuildRolesSetting().definition.schema;
const SCHEMA = normalizeSchema({ ...declared, columns: [...declared.columns, versionColumn()] });
const KEY = { role_id: '104' };
const AUDIT = { created_at: 't', created_by: '1', last_updated_at: 't', last_updated_by: '1' };
const row = (perms: string[], index: number, version: number): SettingRow => ({
  ...KEY,
  perms,
  index,
  ...AUDIT,
  version,
});
const stored = (now: SettingRow | null) => (): SettingRow | null => now;

describe('rollbackPlan', () => {
  it.each([
    [
      'an Update: the earlier values, at the current version',
      [{ revision: 7, key: KEY, before: row(['a.b'], 1, 1), after: row(['a.b', 'c.d'], 1, 2) }],
      row(['a.b', 'c.d'], 1, 2),
      [
        {
          operation: 'Update',
          fields: { ...KEY, perms: ['a.b'], index: 1, version: 2 },
          reverts: 7,
        },
      ],
    ],
    [
      'a Create: a Delete at the current version',
      [{ revision: 3, key: KEY, before: null, after: row(['a.b'], 1, 1) }],
      row(['a.b'], 1, 1),
      [{ operation: 'Delete', fields: { ...KEY, version: 1 }, reverts: 3 }],
    ],
    [
      'a Delete: a Create with the writable values',
      [{ revision: 9, key: KEY, before: row(['a.b'], 4, 3), after: null }],
      null,
      [{ operation: 'Create', fields: { ...KEY, perms: ['a.b'], index: 4 }, reverts: 9 }],
    ],
    [
      'several revisions of one entry: back to before the first, undoing the first',
      [
        { revision: 10, key: KEY, before: row(['a.b'], 1, 1), after: row(['x.y'], 1, 2) },
        { revision: 12, key: KEY, before: row(['x.y'], 1, 2), after: row(['x.y'], 5, 3) },
      ],
      row(['x.y'], 5, 3),
      [
        {
          operation: 'Update',
          fields: { ...KEY, perms: ['a.b'], index: 1, version: 3 },
          reverts: 10,
        },
      ],
    ],
    [
      'a Create then a Delete: nothing to do',
      [
        { revision: 1, key: KEY, before: null, after: row([], 1, 1) },
        { revision: 2, key: KEY, before: row([], 1, 1), after: null },
      ],
      null,
      [],
    ],
  ])('undoes %s', (_case, revisions, now, operations) => {
    expect(rollbackPlan(SCHEMA, revisions, stored(now))).toEqual({ ok: true, operations });
  });

  it.each([
    [
      'an entry changed since',
      [{ revision: 7, key: KEY, before: row([], 1, 1), after: row(['a.b'], 1, 2) }],
      row(['a.b', 'e.f'], 1, 3),
      'the entry has changed since revision 7 (it is at version 3)',
    ],
    [
      'an entry deleted since',
      [{ revision: 7, key: KEY, before: row([], 1, 1), after: row(['a.b'], 1, 2) }],
      null,
      'the entry has changed since revision 7 (it no longer exists)',
    ],
    [
      'an entry created again since its Delete',
      [{ revision: 9, key: KEY, before: row(['a.b'], 4, 3), after: null }],
      row([], 2, 1),
      'the entry has changed since revision 9 (it is at version 1)',
    ],
    [
      'an entry deleted and created again since, back at the same version',
      [{ revision: 7, key: KEY, before: row([], 1, 1), after: row(['a.b'], 1, 2) }],
      { ...row(['a.b'], 1, 2), created_at: 'later' },
      'the entry has changed since revision 7 (it is at version 2)',
    ],
    [
      'a record from before revisions named their entry',
      [{ revision: 2, key: null, before: null, after: row([], 1, 1) }],
      null,
      'revision 2 was recorded before revisions named their entry, so it cannot be undone',
    ],
  ])('refuses %s, saying why', (_case, revisions, now, reason) => {
    expect(rollbackPlan(SCHEMA, revisions, stored(now))).toEqual({
      ok: false,
      refusals: [{ key: revisions[0].key, reason }],
    });
  });
});
