import { AppException } from 'src/common/errors/app.exception';
import fc from 'fast-check';
import {
  decimalAtMostSource,
  isSnowflake,
  ParseSnowflakePipe,
} from 'src/common/validation/snowflake';

describe('snowflakes', () => {
  it.each([
    ['0', true],
    ['1100000000000000100', true],
    ['18446744073709551615', true], // 2^64 - 1
    ['18446744073709551616', false], // 2^64
    ['99999999999999999999', false],
    ['123456789012345678901', false],
    ['0123', false],
    ['-1', false],
    ['1e18', false],
    ['12 ', false],
    ['', false],
    ['abc', false],
    ['١٢٣', false], // other scripts' digits
  ])('%j is a snowflake: %s', (value, expected) => {
    expect(isSnowflake(value)).toBe(expected);
  });

  it.each([123, null, undefined, ['1']])('refuses the non-string %j', (value) => {
    expect(isSnowflake(value)).toBe(false);
  });

  it('answers 400 naming the parameter', () => {
    const pipe = new ParseSnowflakePipe('guild_id');
    expect(pipe.transform('42')).toBe('42');
    const error = (() => {
      try {
        pipe.transform('x');
      } catch (thrown) {
        return thrown;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(AppException);
    expect(error).toMatchObject({ code: 'BadRequest', details: [{ field: 'guild_id' }] });
  });
});

describe('decimalAtMostSource', () => {
  const oracle = (text: string, max: bigint): boolean =>
    /^(0|[1-9][0-9]*)$/.test(text) && BigInt(text) <= max;

  it.each([0n, 1n, 9n, 10n, 19n, 100n, 101n, 990n, 1000n, 18446744073709551615n])(
    'matches exactly the numbers up to %s around its boundaries',
    (max) => {
      const pattern = new RegExp(`^${decimalAtMostSource(max)}$`);
      const around = [0n, 1n, max - 1n, max, max + 1n, max * 10n, max + 10n ** 3n];
      for (const value of around.filter((v) => v >= 0n)) {
        expect({ value, matches: pattern.test(value.toString()) }).toEqual({
          value,
          matches: value <= max,
        });
      }
    },
  );

  it('agrees with BigInt comparison on arbitrary digit strings', () => {
    const max = 18446744073709551615n;
    const pattern = new RegExp(`^${decimalAtMostSource(max)}$`);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,22}$/), (text) => {
        expect(pattern.test(text)).toBe(oracle(text, max));
      }),
      { numRuns: 5_000 },
    );
  });
});
