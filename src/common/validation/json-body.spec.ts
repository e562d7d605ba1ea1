import { jsonBodyProblem, reservedKey, unstorableText } from 'src/common/validation/json-body';

const TOO_DEEP = 'The JSON body is nested too deeply: at most 3 levels of arrays and objects';

describe('JSON bodies refused before parsing', () => {
  it.each([
    ['a flat object', '{"a": 1, "b": "x"}', null],
    ['exactly the limit', '{"a": [{"b": 1}]}', null],
    ['arrays over the limit', '[[[[1]]]]', TOO_DEEP],
    ['objects over the limit', '{"a":{"b":{"c":{"d":1}}}}', TOO_DEEP],
    ['siblings that never exceed it', '[[[1]], [[2]], [[3]]]', null],
    ['brackets inside strings', '{"a": "[[[[{{{{"}', null],
    ['an escaped quote before brackets in a string', '{"a": "\\"[[[[[["}', null],
    ['an escaped backslash ending a string', '[["\\\\"], [[1]]]', null],
  ])('%s', (_name, text, expected) => {
    expect(jsonBodyProblem(text, 3)).toBe(expected);
  });

  it('scans 30,000 levels in one pass', () => {
    expect(jsonBodyProblem('['.repeat(30_000) + ']'.repeat(30_000))).toBe(
      'The JSON body is nested too deeply: at most 64 levels of arrays and objects',
    );
  });
});

describe('unstorableText', () => {
  const NUL = 'must not contain the NUL character (\\u0000)';
  const SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)';

  it.each<[string, unknown, { field: string; problem: string } | null]>([
    ['a clean body', { name: 'a', list: ['b', { c: 'd' }], n: 1, none: null }, null],
    ['a NUL in a value', { name: 'a\u0000b' }, { field: 'name', problem: NUL }],
    [
      'a NUL in an array',
      { fields: { perms: ['ok', 'x\u0000'] } },
      { field: 'fields.perms.1', problem: NUL },
    ],
    ['a NUL in a key', { fields: { 'a\u0000': 1 } }, { field: 'fields.a\u0000', problem: NUL }],
    ['a NUL as the whole body', 'x\u0000', { field: 'body', problem: NUL }],
    ['a lone high surrogate', { name: 'a.\ud800' }, { field: 'name', problem: SURROGATE }],
    ['a lone low surrogate in a key', { '\udc00': 1 }, { field: '\udc00', problem: SURROGATE }],
    ['a reversed pair', ['\udc00\ud800'], { field: '0', problem: SURROGATE }],
    ['a well-formed pair (an emoji)', { name: '\ud83d\ude00 😀' }, null],
    ['other control characters', { a: '\u0001\n\t' }, null],
    ['a backslash followed by u0000', { a: '\\u0000' }, null],
  ])('%s', (_name, value, expected) => {
    expect(unstorableText(value)).toEqual(expected);
  });
});

describe('reservedKey', () => {
  it.each([
    [{ constructor: 1 }, 'constructor'],
    [{ a: { b: [{ prototype: {} }] } }, 'a.b.0.prototype'],
    [{ a: [{ ok: 1 }, { constructor: { prototype: {} } }] }, 'a.1.constructor'],
  ])('finds the reserved key of %j at %s', (value, field) => {
    expect(reservedKey(value)?.field).toBe(field);
  });

  it.each([[{}], [{ a: 'constructor' }], [['constructor', 'prototype']], ['constructor'], [null]])(
    'finds none in %j (values may say anything)',
    (value) => {
      expect(reservedKey(value)).toBeNull();
    },
  );
});
