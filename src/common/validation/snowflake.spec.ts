import { AppException } from 'src/common/errors/app.exception';
import { isSnowflake, ParseSnowflakePipe } from 'src/common/validation/snowflake';

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
