import { isStorableTimestamp } from 'src/common/validation/date-time';

describe('timestamps the server accepts', () => {
  it.each([
    ['2024-03-01T10:00:00Z', true],
    ['2024-03-01t10:00:00z', true],
    ['2024-03-01 10:00:00Z', true],
    ['2024-03-01T10:00:00.123456789+05:30', true],
    ['2024-03-01T10:00:00-0800', true],
    ['2024-02-29T00:00:00Z', true],
    ['2000-02-29T00:00:00Z', true],
    ['0000-01-01T00:00:00Z', true],
    ['9999-12-31T23:59:59.999-23:59', true],
    ['2016-12-31T23:59:60Z', false], // a leap second: valid JSON Schema, no JS or SQL instant
    ['2016-12-31T12:59:60-11:00', false],
    ['2023-02-29T00:00:00Z', false],
    ['1900-02-29T00:00:00Z', false],
    ['2016-02-30T00:00:00Z', false],
    ['2016-13-01T00:00:00Z', false],
    ['2016-00-01T00:00:00Z', false],
    ['2016-01-01T24:00:00Z', false],
    ['2016-01-01T00:60:00Z', false],
    ['2016-01-01T00:00:00+05', false], // ajv-formats accepts it, Date.parse does not
    ['2016-01-01T00:00:00+24:00', false],
    ['2016-01-01T00:00:00', false],
    ['2016-01-01', false],
    ['+275760-09-13T00:00:00Z', false],
    ['-000001-01-01T00:00:00Z', false],
    ['2016-01-01T00:00:00Z\n', false],
    ['', false],
  ])('%j: %s', (value, expected) => {
    expect(isStorableTimestamp(value)).toBe(expected);
  });
});
