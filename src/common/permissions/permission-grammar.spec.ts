import fc from 'fast-check';
import { canonical, parsePermission } from 'src/common/permissions/permission-grammar';
import vectors from 'test/vectors/permission-string-vectors.json';

describe('permission strings: parse', () => {
  const cases = vectors.parse as { id: string; input: { string: string }; expected: unknown }[];
  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, { input, expected }) => {
    const parsed = parsePermission(input.string);
    expect({ ...parsed, canonical: canonical(parsed) }).toEqual(expected);
  });
});

/** The former implementation (a regex tried at every start), kept here only as an oracle. */
function parseByRegexAtEveryStart(text: string): ReturnType<typeof parsePermission> {
  const negator = text.startsWith('~');
  const rest = negator ? text.slice(1) : text;
  for (let start = 0; start < rest.length; start++) {
    if (rest[start] === '.') continue;
    const match = /([^.]+)\.(.+)$/s.exec(rest.slice(start));
    if (match && match.index === 0) return { namespace: match[1], perm: match[2], negator };
  }
  return { namespace: 'global', perm: rest, negator };
}

describe('permission strings: parse on any input', () => {
  const alphabet = fc.constantFrom('a', 'b', '.', '~', '*', '@', ' ', '\n');

  it('agrees with the regex oracle on random strings', () => {
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }), (chars) => {
        const text = chars.join('');
        expect(parsePermission(text)).toEqual(parseByRegexAtEveryStart(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with the regex oracle on long strings with at most one dot near the end', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', '~', '*', '@', ' '), maxLength: 400 }),
        fc.constantFrom('', '.', '.x', 'x.', '..', '.x.y'),
        (body, tail) => {
          expect(parsePermission(body + tail)).toEqual(parseByRegexAtEveryStart(body + tail));
        },
      ),
      { numRuns: 300 },
    );
  });

  // The former implementation took cubic time here (it never finished on this input).
  it('parses a 100,000-character string without a dot', () => {
    const long = 'a'.repeat(100_000);
    expect(parsePermission(long)).toEqual({ namespace: 'global', perm: long, negator: false });
    expect(parsePermission(`~${long}.b`)).toEqual({ namespace: long, perm: 'b', negator: true });
  });
});
