import {
  catalogProblems,
  type DeclaredCommand,
  type DeclaredOption,
} from 'src/commands/catalog-rules';
import { COMMAND_CATALOG, COMMAND_NAMES } from 'src/commands/command-catalog';

const STRING = 3;
const INTEGER = 4;
const CHANNEL = 7;
const SUB = 1;
const GROUP = 2;

const option = (overrides: Partial<DeclaredOption> = {}): DeclaredOption => ({
  type: STRING,
  name: 'text',
  description: 'Some text',
  ...overrides,
});
const command = (overrides: Partial<DeclaredCommand> = {}): DeclaredCommand => ({
  name: 'example',
  description: 'An example command',
  ...overrides,
});
const withOptions = (...options: DeclaredOption[]): DeclaredCommand => command({ options });
const many = <T>(count: number, make: (i: number) => T): T[] =>
  Array.from({ length: count }, (_, i) => make(i));

describe('the shipped command catalog', () => {
  it('follows every rule of the platform', () => {
    expect(catalogProblems(COMMAND_CATALOG)).toEqual([]);
  });

  it('has the moderation and utility commands', () => {
    expect(COMMAND_NAMES).toEqual(
      expect.arrayContaining([
        'ban',
        'kick',
        'timeout',
        'warn',
        'purge',
        'lockdown',
        'settings',
        'stats',
        'help',
        'whois',
        'remindme',
      ]),
    );
  });
});

describe('catalog rules: each violation is found and names the command', () => {
  const cases: [string, DeclaredCommand[], string][] = [
    [
      'a chat-input name with spaces',
      [command({ name: 'bad name' })],
      'bad name: name "bad name" must be 1 to 32 letters, digits, "-" or "_"',
    ],
    [
      'a chat-input name longer than 32',
      [command({ name: 'a'.repeat(33) })],
      'must be 1 to 32 letters',
    ],
    ['an empty name', [command({ name: '' })], 'must be 1 to 32 letters'],
    [
      'an uppercase chat-input name',
      [command({ name: 'Ban' })],
      'Ban: name "Ban" must be lowercase',
    ],
    ['an empty description', [command({ description: '' })], 'description must be 1 to 100'],
    [
      'a description over 100',
      [command({ description: 'x'.repeat(101) })],
      'description must be 1 to 100',
    ],
    ['a command declared twice', [command(), command()], 'example: the name is declared twice'],
    [
      'more than 100 chat-input commands',
      many(101, (i) => command({ name: `c${i}` })),
      'catalog: 101 commands of type 1, at most 100 allowed',
    ],
    [
      'more than 15 user commands',
      many(16, (i) => ({ type: 2, name: `User ${i}` })),
      'catalog: 16 commands of type 2, at most 15 allowed',
    ],
    [
      'a context-menu command with a description',
      [{ type: 3, name: 'Report', description: 'Reports' }],
      'Report: context-menu commands have no description',
    ],
    [
      'a context-menu command with options',
      [{ type: 2, name: 'Info', options: [option()] }],
      'Info: context-menu commands take no options',
    ],
    ['an unknown command type', [command({ type: 9 })], 'type 9 is not a command type'],
    [
      'an unknown locale',
      [command({ name_localizations: { klingon: 'x' } })],
      'name_localizations: "klingon" is not a locale of the platform',
    ],
    [
      'a malformed default_member_permissions',
      [command({ default_member_permissions: 'ADMIN' })],
      'default_member_permissions must be a decimal bitfield',
    ],
    [
      'more than 25 options',
      [withOptions(...many(26, (i) => option({ name: `o${i}` })))],
      'options: 26 options, at most 25 allowed',
    ],
    [
      'an option name used twice',
      [withOptions(option(), option())],
      'options.text: the name is used twice',
    ],
    [
      'a required option after an optional one',
      [withOptions(option({ name: 'a' }), option({ name: 'b', required: true }))],
      'options.b: required options must come before optional ones',
    ],
    [
      'an uppercase option name',
      [withOptions(option({ name: 'Text' }))],
      'options.Text: name "Text" must be lowercase',
    ],
    [
      'an option without description',
      [withOptions(option({ description: '' }))],
      'options.text: description must be 1 to 100',
    ],
    [
      'an option type out of range',
      [withOptions(option({ type: 12 }))],
      'type 12 is not an option type (1-11)',
    ],
    [
      'more than 25 choices',
      [withOptions(option({ choices: many(26, (i) => ({ name: `c${i}`, value: `v${i}` })) }))],
      'options.text: 26 choices, at most 25 allowed',
    ],
    [
      'choices on a boolean option',
      [withOptions(option({ type: 5, choices: [{ name: 'yes', value: 'y' }] }))],
      'choices are for string, integer and number options only',
    ],
    [
      'a number value on a string option',
      [withOptions(option({ choices: [{ name: 'one', value: 1 }] }))],
      'choice "one": the value must be a string',
    ],
    [
      'a fractional value on an integer option',
      [withOptions(option({ type: INTEGER, choices: [{ name: 'half', value: 0.5 }] }))],
      'choice "half": the value must be an integer',
    ],
    [
      'a choice name over 100',
      [withOptions(option({ choices: [{ name: 'n'.repeat(101), value: 'v' }] }))],
      'name must be 1 to 100 characters',
    ],
    [
      'a string choice value over 100',
      [withOptions(option({ choices: [{ name: 'n', value: 'v'.repeat(101) }] }))],
      'value must be 1 to 100 characters',
    ],
    [
      'autocomplete together with choices',
      [withOptions(option({ autocomplete: true, choices: [{ name: 'a', value: 'a' }] }))],
      'autocomplete cannot be used with choices',
    ],
    [
      'autocomplete on a user option',
      [withOptions(option({ type: 6, autocomplete: true }))],
      'autocomplete is for string, integer and number options only',
    ],
    [
      'channel types on a string option',
      [withOptions(option({ channel_types: [0] }))],
      'channel_types is for channel options only',
    ],
    [
      'an unknown channel type',
      [withOptions(option({ type: CHANNEL, channel_types: [7] }))],
      'options.text: 7 is not a channel type',
    ],
    [
      'min_value on a string option',
      [withOptions(option({ min_value: 1 }))],
      'min_value is for integer and number options only',
    ],
    [
      'min_value above max_value',
      [withOptions(option({ type: INTEGER, min_value: 5, max_value: 1 }))],
      'min_value exceeds max_value',
    ],
    [
      'a fractional bound on an integer option',
      [withOptions(option({ type: INTEGER, max_value: 1.5 }))],
      'max_value of an integer option must be an integer',
    ],
    [
      'a bound beyond 2^53',
      [withOptions(option({ type: 10, max_value: 2 ** 54 }))],
      'max_value is out of range',
    ],
    [
      'min_length on an integer option',
      [withOptions(option({ type: INTEGER, min_length: 1 }))],
      'min_length is for string options only',
    ],
    [
      'max_length over 6000',
      [withOptions(option({ max_length: 6001 }))],
      'max_length must be an integer from 1 to 6000',
    ],
    [
      'min_length above max_length',
      [withOptions(option({ min_length: 10, max_length: 5 }))],
      'min_length exceeds max_length',
    ],
    [
      'options inside a plain option',
      [withOptions(option({ options: [option({ name: 'inner' })] }))],
      'options.text: only sub-commands and groups hold options',
    ],
    [
      'sub-commands mixed with options',
      [withOptions(option({ type: SUB, name: 'sub' }), option())],
      'options: sub-commands cannot be mixed with other options',
    ],
    [
      'a required sub-command',
      [withOptions(option({ type: SUB, name: 'sub', required: true }))],
      'options.sub: sub-commands and groups cannot be required',
    ],
    [
      'a group inside a sub-command',
      [
        withOptions(
          option({
            type: SUB,
            name: 'sub',
            options: [
              option({ type: GROUP, name: 'group', options: [option({ type: SUB, name: 'x' })] }),
            ],
          }),
        ),
      ],
      'options.sub.group: a group can only sit at the top of a command',
    ],
    [
      'a group holding a plain option',
      [withOptions(option({ type: GROUP, name: 'group', options: [option()] }))],
      'options.group: a group holds sub-commands only',
    ],
    [
      'an empty group',
      [withOptions(option({ type: GROUP, name: 'group' }))],
      'options.group: a group needs sub-commands',
    ],
    [
      'a sub-command inside a sub-command',
      [
        withOptions(
          option({ type: SUB, name: 'outer', options: [option({ type: SUB, name: 'inner' })] }),
        ),
      ],
      'options.outer: a sub-command cannot hold sub-commands',
    ],
    [
      'more than 8000 characters in total',
      [
        withOptions(
          ...many(25, (i) =>
            option({
              name: `o${i}`,
              description: 'd'.repeat(100),
              choices: many(25, (j) => ({ name: `c${j}`.padEnd(100, 'x'), value: `v${j}` })),
            }),
          ),
        ),
      ],
      'characters in names, descriptions and values; at most 8000 allowed',
    ],
  ];

  it.each(cases)('%s', (_name, catalog, expected) => {
    const problems = catalogProblems(catalog);
    expect(problems.some((problem) => problem.includes(expected))).toBe(true);
  });

  it('accepts a command at the limits', () => {
    const atLimits = withOptions(
      ...many(25, (i) =>
        option({
          name: `o${i}`.padEnd(32, 'x'),
          description: 'd'.repeat(30),
          required: i < 3,
          choices: i === 0 ? many(25, (j) => ({ name: `c${j}`, value: `v${j}` })) : undefined,
        }),
      ),
    );
    expect(catalogProblems([{ ...atLimits, name: 'ü-名前_1' }])).toEqual([]);
  });
});
