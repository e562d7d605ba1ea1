import { ValidationError } from 'class-validator';
import { summariseDetails, toErrorDetails } from 'src/common/validation/validation-details';

function error(
  property: string,
  constraints?: Record<string, string>,
  children: ValidationError[] = [],
  sent: { value?: unknown } = { value: 'sent' },
): ValidationError {
  const value = 'value' in sent ? sent.value : undefined;
  return Object.assign(new ValidationError(), { property, constraints, children, value });
}

describe('toErrorDetails', () => {
  it('gives one problem per field, with dotted paths', () => {
    const errors = [
      error('name', { maxLength: 'name is too long', matches: 'name has a bad character' }),
      error('tags', undefined, [
        error('0', undefined, [error('label', { isString: 'bad label' }, [], { value: 7 })]),
      ]),
    ];
    expect(toErrorDetails(errors)).toEqual([
      { field: 'name', message: 'name is too long' },
      { field: 'tags.0.label', message: 'bad label' },
    ]);
  });

  it.each([
    [
      'a missing field is required, whatever range it breaks',
      error(
        'expiry',
        { min: 'expiry must not be less than 60', isInt: 'expiry must be an integer' },
        [],
        { value: undefined },
      ),
      'expiry is required',
    ],
    [
      "a missing field in the DTO's own words",
      error('fields', { isDefined: 'fields is required (use {} for none)' }, [], {
        value: undefined,
      }),
      'fields is required (use {} for none)',
    ],
    [
      'a wrong type before a range',
      error(
        'expiry',
        { min: 'expiry must not be less than 60', isInt: 'expiry must be an integer number' },
        [],
        { value: 'soon' },
      ),
      'expiry must be an integer number',
    ],
    [
      'a wrong type before a length',
      error(
        'setting',
        { length: 'setting must be 1 to 64 characters', isString: 'setting must be a string' },
        [],
        { value: 5 },
      ),
      'setting must be a string',
    ],
    [
      'a value of the right type: the first rule it breaks',
      error(
        'expiry',
        { min: 'expiry must not be less than 60', max: 'expiry must be at most 90' },
        [],
        { value: 5 },
      ),
      'expiry must not be less than 60',
    ],
    [
      'null is sent, so not missing',
      error('name', { isString: 'name must be a string' }, [], { value: null }),
      'name must be a string',
    ],
  ])('%s', (_case, failed, message) => {
    expect(toErrorDetails([failed])).toEqual([{ field: failed.property, message }]);
  });

  it('returns nothing for no errors', () => {
    expect(toErrorDetails([])).toEqual([]);
  });
});

describe('summariseDetails', () => {
  it.each([
    [[], 'The request is invalid'],
    [[{ field: 'a', message: 'a is bad' }], 'Invalid request: a is bad'],
    [
      [
        { field: 'a', message: 'a is bad' },
        { field: 'b', message: 'b is bad' },
      ],
      'Invalid request: a is bad (and 1 more problem(s), see details)',
    ],
  ])('summarises %p', (details, expected) => {
    expect(summariseDetails(details)).toBe(expected);
  });
});
