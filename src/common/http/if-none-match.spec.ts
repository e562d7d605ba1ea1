import { ifNoneMatchMatches } from 'src/common/http/if-none-match';

describe('ifNoneMatchMatches', () => {
  const etag = '"abc"';

  it.each<[string, string | string[] | undefined, boolean]>([
    ['no header', undefined, false],
    ['an empty header', '', false],
    ['the same tag', '"abc"', true],
    ['the weak form of the tag', 'W/"abc"', true],
    ['a list holding the tag', '"x", "abc"', true],
    ['a list holding the weak tag', '"x",W/"abc"', true],
    ['a list without the tag', '"x", "y"', false],
    ['any tag', '*', true],
    ['any tag with spaces', ' * ', true],
    ['a tag that only contains the value', '"abcd"', false],
    ['an unquoted value', 'abc', false],
    ['a malformed list before the tag', 'junk, "abc"', false],
    ['repeated headers', ['"x"', '"abc"'], true],
  ])('%s', (_name, header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });

  it('compares a weak current tag weakly', () => {
    expect(ifNoneMatchMatches('"abc"', 'W/"abc"')).toBe(true);
  });
});
