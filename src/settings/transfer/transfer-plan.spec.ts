import type { SettingRow } from 'src/settings/schema/settings-definition';
import { GuildRolesSetting } from 'src/permissions/guildroles.setting';
import { normalizeSchema } from 'src/settings/schema/normalize-schema';
import { versionColumn } from 'src/settings/schema/settings-schema';
import {
  exportedRow,
  importPlan,
  mapIds,
  referencedIds,
} from 'src/settings/transfer/transfer-plan';

const declared = new GuildRolesSetting().definition.schema;
const SCHEMA = normalizeSchema({ ...declared, columns: [...declared.columns, versionColumn()] });
const AUDIT = { created_at: 't', created_by: '1', last_updated_at: 't', last_updated_by: '1' };
const stored = (role_id: string, perms: string[], index: number, version = 1): SettingRow => ({
  role_id,
  perms,
  index,
  ...AUDIT,
  version,
});

describe('settings transfer', () => {
  it('exports the key and the values a client sets, without audit columns or the version', () => {
    expect(exportedRow(SCHEMA, stored('104', ['a.b'], 2, 7))).toEqual({
      role_id: '104',
      perms: ['a.b'],
      index: 2,
    });
  });

  it('maps role ids in keys and values, and lists the ids rows refer to', () => {
    const row = { role_id: '104', perms: ['a.b'], index: 2 };
    expect(mapIds(SCHEMA, row, { roles: { '104': '204' } })).toEqual({ ...row, role_id: '204' });
    expect(mapIds(SCHEMA, row, {})).toEqual(row);
    expect(referencedIds(SCHEMA, [row, { ...row, role_id: '105' }])).toEqual({
      roles: new Set(['104', '105']),
      channels: new Set(),
    });
  });

  it.each<[string, object, string]>([
    ['constructor', {}, 'constructor'],
    ['__proto__', {}, '__proto__'],
    ['toString', { roles: {} }, 'toString'],
    ['hasOwnProperty', { roles: { '104': '204' } }, 'hasOwnProperty'],
    // Named by the mapping itself (as JSON.parse makes it, an own key): mapped.
    ['__proto__', JSON.parse('{"roles": {"__proto__": "204"}}') as object, '204'],
  ])('maps the id %j with %j to %j: only the mapping’s own entries count', (id, mapping, to) => {
    const row = { role_id: id, perms: ['a.b'], index: 2 };
    expect(mapIds(SCHEMA, row, mapping)).toEqual({ ...row, role_id: to });
  });

  it('plans creates, updates at the current version, deletes and unchanged entries by key', () => {
    const current = [stored('1', ['a.b'], 1, 4), stored('2', ['c.d'], 2), stored('3', [], 3)];
    const wanted = [
      { role_id: '1', perms: ['a.b', 'x.y'], index: 1 },
      { role_id: '2', perms: ['c.d'], index: 2 },
      { role_id: '9', perms: [], index: 9 },
    ];
    expect(importPlan(SCHEMA, wanted, current)).toEqual({
      created: [{ role_id: '9', perms: [], index: 9 }],
      updated: [
        {
          key: { role_id: '1' },
          fields: { role_id: '1', version: 4, perms: ['a.b', 'x.y'] },
          changes: { perms: { before: ['a.b'], after: ['a.b', 'x.y'] } },
        },
      ],
      deleted: [{ key: { role_id: '3' }, fields: { role_id: '3', version: 1 } }],
      unchanged: [{ role_id: '2' }],
      refused: [],
    });
  });

  it('refuses an entry the document lists twice', () => {
    const row = { role_id: '1', perms: [], index: 1 };
    expect(importPlan(SCHEMA, [row, row], []).refused).toEqual([
      { key: { role_id: '1' }, reason: 'the document lists this entry twice' },
    ]);
  });
});
