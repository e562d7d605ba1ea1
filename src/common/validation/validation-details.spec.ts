import { ValidationError } from 'class-validator';
import { summariseDetails, toErrorDetails } from 'src/common/validation/validation-details';

function error(
  property: string,
  constraints?: Record<string, string>,
  children: ValidationError[] = [],
): ValidationError {
  return Object.assign(new ValidationError(), { property, constraints, children });
}

describe('toErrorDetails', () => {
  it('lists every constraint of every field with dotted paths', () => {
    const errors = [
      error('name', { isString: 'name must be a string', length: 'name is too long' }),
      error('tags', undefined, [
        error('0', undefined, [error('label', { isString: 'bad label' })]),
      ]),
    ];
    expect(toErrorDetails(errors)).toEqual([
      { field: 'name', message: 'name must be a string' },
      { field: 'name', message: 'name is too long' },
      { field: 'tags.0.label', message: 'bad label' },
    ]);
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
