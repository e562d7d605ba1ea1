import { jsonBodyProblem } from 'src/common/validation/json-body';

const TOO_DEEP = 'The JSON body is nested too deeply: at most 3 levels of arrays and objects';
const NUL = 'JSON strings may not contain the NUL character (\\u0000)';

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
    ['a NUL escape in a value', '{"name": "a\\u0000b"}', NUL],
    ['a NUL escape in a key', '{"a\\u0000": 1}', NUL],
    ['an escaped backslash followed by u0000 (not NUL)', '{"a": "\\\\u0000"}', null],
    ['other control escapes', '{"a": "\\u0001\\n\\t"}', null],
    ['u0000 outside strings (malformed, left to the parser)', 'u0000', null],
  ])('%s', (_name, text, expected) => {
    expect(jsonBodyProblem(text, 3)).toBe(expected);
  });

  it('scans 30,000 levels in one pass', () => {
    expect(jsonBodyProblem('['.repeat(30_000) + ']'.repeat(30_000))).toBe(
      'The JSON body is nested too deeply: at most 64 levels of arrays and objects',
    );
  });
});
