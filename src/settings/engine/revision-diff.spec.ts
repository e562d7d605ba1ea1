import { diffRows } from 'src/settings/engine/revision-diff';

describe('diffRows', () => {
  it.each([
    [
      'a created entry: every column, from null',
      null,
      { role_id: '1', perms: ['a.b'] },
      { role_id: { before: null, after: '1' }, perms: { before: null, after: ['a.b'] } },
    ],
    [
      'a deleted entry: every column, to null',
      { role_id: '1', index: 2 },
      null,
      { role_id: { before: '1', after: null }, index: { before: 2, after: null } },
    ],
    [
      'an update: only the columns that changed',
      { role_id: '1', perms: ['a.b'], index: 2, version: 1 },
      { role_id: '1', perms: ['a.b', 'c.d'], index: 2, version: 2 },
      { perms: { before: ['a.b'], after: ['a.b', 'c.d'] }, version: { before: 1, after: 2 } },
    ],
    [
      'objects compared by content, whatever their key order',
      { id: 'x', meta: { a: 1, b: 2 } },
      { id: 'x', meta: { b: 2, a: 1 } },
      {},
    ],
    [
      'a column set to null, and one that appears',
      { id: 'x', max: 5 },
      { id: 'x', max: null, extra: false },
      { max: { before: 5, after: null }, extra: { before: null, after: false } },
    ],
    ['nothing on either side', null, null, {}],
  ])('%s', (_case, before, after, expected) => {
    expect(diffRows(before, after)).toEqual(expected);
  });
});
