import { IsNull } from 'typeorm';
import { array, auditColumns, info, scalar, text } from 'src/settings/schema/columns';
import {
  autoFilled,
  defaultOrder,
  describeKey,
  generateKeys,
  keyOf,
  offers,
  stableJson,
  toApi,
  toEntity,
  valuesOf,
  viewFilters,
} from 'src/settings/engine/settings-rows';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';
import type { SettingSchema } from 'src/settings/schema/settings-schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A setting with a generated uuid key, a role key, a timestamp, a hidden column and an index. */
function setting(overrides: Partial<SettingSchema> = {}): RegisteredSetting {
  const schema: SettingSchema = {
    id: 'reminders',
    name: 'Reminders',
    description: 'Reminders',
    icon: 'mdi:bell',
    index_by: 'position',
    operations: ['View', 'Create', 'Delete'],
    columns: [
      scalar('id', 'Id', text('uuid'), {
        description: 'Generated',
        primaryKey: true,
        readonly: ['Create'],
      }),
      scalar('role', 'Role', text('role'), { description: 'Who', primaryKey: true }),
      scalar('due', 'Due', text('timestamp'), { description: 'When', nullable: true }),
      scalar('secret', 'Secret', text('normal'), { description: 'Hidden', hidden: ['View'] }),
      scalar('position', 'Position', { type: 'Integer', min: 0, max: 9 }, { description: 'Rank' }),
      array('channels', 'Channels', text('channel'), { description: 'Where' }),
      info('note', 'Note', 'Not stored'),
      ...auditColumns(),
    ],
    title_template: '{{role}}',
    view_template: '{{role}}',
    postsend_template: '{{role}}',
    footer: null,
    ...overrides,
  };
  return { schema } as RegisteredSetting;
}

describe('the settings engine’s row handling', () => {
  it.each([
    [{ b: 1, a: { d: 1, c: 2 } }, '{"a":{"c":2,"d":1},"b":1}'],
    [{ limit: 5, role: '1' }, '{"limit":5,"role":"1"}'],
    [[{ b: 1, a: 2 }, 3], '[{"a":2,"b":1},3]'],
    [null, 'null'],
    ['text', '"text"'],
    [{}, '{}'],
    [{ a: 1, b: 'x' }, '{"a":1,"b":"x"}'],
    [{ b: 'x', a: 1 }, '{"a":1,"b":"x"}'],
    // Integer-like keys come first in any object, in numeric order, whatever the sort.
    [{ b: 3, '10': 1, '9': 2 }, '{"9":2,"10":1,"b":3}'],
    [{ a: new Date(0), b: 1 }, '{"a":"1970-01-01T00:00:00.000Z","b":1}'],
    [{ a: 1, b: undefined, c: null }, '{"a":1,"c":null}'],
    [{ b: [2, 1], a: true }, '{"a":true,"b":[2,1]}'],
    [Object.assign(Object.create({ inherited: 1 }) as object, { z: 1, y: 2 }), '{"y":2,"z":1}'],
  ])('gives equal queries one cache key: %j', (value, expected) => {
    expect(stableJson(value)).toBe(expected);
  });

  it.each([
    ['View', true],
    ['Create', true],
    ['Update', false],
    ['Delete', true],
    ['Reorder', true],
  ] as const)('offers %s as declared (Reorder with index_by)', (operation, offered) => {
    expect(offers(setting(), operation)).toBe(offered);
  });

  it('offers no Reorder without index_by', () => {
    expect(offers(setting({ index_by: null }), 'Reorder')).toBe(false);
  });

  it('turns API values into entity values: timestamps to dates, unknown and widget ids left out', () => {
    const entity = toEntity(setting(), {
      role: '7',
      due: '2026-01-02T03:04:05.000Z',
      note: 'x',
      guild_id: '9',
      extra: 1,
    });
    expect(entity).toEqual({ role: '7', due: new Date('2026-01-02T03:04:05.000Z') });
  });

  it('matches a null View filter as an empty column', () => {
    expect(viewFilters(setting(), { due: null, role: '7' })).toEqual({ due: IsNull(), role: '7' });
  });

  it('answers dates as ISO 8601, absent values as null, and hides columns hidden on View', () => {
    const entity = { id: 'k', role: '7', due: new Date('2026-01-02T03:04:05Z'), secret: 's' };
    const forClient = toApi(setting(), entity, 'client');
    expect(forClient).toMatchObject({ id: 'k', role: '7', due: '2026-01-02T03:04:05.000Z' });
    expect(forClient).not.toHaveProperty('secret');
    expect(forClient.channels).toBeNull();
    expect(toApi(setting(), entity, 'all')).toHaveProperty('secret', 's');
  });

  it('reads and describes the primary key', () => {
    const row = { id: 'k', role: '7', position: 2 };
    expect(keyOf(setting(), row)).toEqual({ id: 'k', role: '7' });
    expect(describeKey(setting(), row)).toBe('id k, role 7');
  });

  it('generates a uuid key that clients cannot set on Create, and only that one', () => {
    const row: Record<string, unknown> = { role: '7' };
    generateKeys(setting(), row);
    expect(row.id).toMatch(UUID);
    expect(row.role).toBe('7');
  });

  it('fills created_* on Create and last_updated_* always, only where declared', () => {
    const now = new Date('2026-01-02T03:04:05Z');
    expect(autoFilled(setting(), '42', now, 'created')).toEqual({
      created_at: now,
      created_by: '42',
      last_updated_at: now,
      last_updated_by: '42',
    });
    expect(autoFilled(setting(), '42', now, 'updated')).toEqual({
      last_updated_at: now,
      last_updated_by: '42',
    });
    const bare = setting();
    bare.schema = { ...bare.schema, columns: bare.schema.columns.slice(0, 2) };
    expect(autoFilled(bare, '42', now, 'created')).toEqual({});
  });

  it('orders rows by index_by, then by the primary key', () => {
    expect(Object.entries(defaultOrder(setting()))).toEqual([
      ['position', 'ASC'],
      ['id', 'ASC'],
      ['role', 'ASC'],
    ]);
  });

  it.each([
    ['a string', '1', ['1']],
    ['an array, strings only', ['1', 2, '3'], ['1', '3']],
    ['anything else', 5, []],
    ['null', null, []],
  ])('reads the ids of %s', (_name, value, expected) => {
    expect(valuesOf(value)).toEqual(expected);
  });
});
