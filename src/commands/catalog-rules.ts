import {
  ApplicationCommandOptionType as OptionType,
  ApplicationCommandType as CommandType,
  ChannelType,
  Locale,
} from 'discord-api-types/v10';

/**
 * The platform's rules for application commands (discord-domain.md §5), as a pure check over a
 * catalog. Shapes are loose on purpose: the point is to find what a typed declaration can still get
 * wrong (lengths, counts, order, combinations).
 */

type Localizations = Partial<Record<string, string | null>> | null | undefined;

export interface DeclaredChoice {
  name: string;
  name_localizations?: Localizations;
  value: string | number;
}

export interface DeclaredOption {
  type: number;
  name: string;
  name_localizations?: Localizations;
  description: string;
  description_localizations?: Localizations;
  required?: boolean;
  choices?: readonly DeclaredChoice[];
  options?: readonly DeclaredOption[];
  channel_types?: readonly number[];
  min_value?: number;
  max_value?: number;
  min_length?: number;
  max_length?: number;
  autocomplete?: boolean;
}

export interface DeclaredCommand {
  type?: number;
  name: string;
  name_localizations?: Localizations;
  /** Required for chat-input commands; context-menu commands have none. */
  description?: string;
  description_localizations?: Localizations;
  options?: readonly DeclaredOption[];
  default_member_permissions?: string | null;
  nsfw?: boolean;
  integration_types?: readonly number[];
  contexts?: readonly number[] | null;
}

export const CHAT_INPUT_NAME = /^[-_\p{L}\p{N}]{1,32}$/u;
const MAX_OPTIONS = 25;
const MAX_CHOICES = 25;
const MAX_TOTAL_CHARACTERS = 8000;
const MAX_INTEGER = Number.MAX_SAFE_INTEGER;
const MAX_STRING_LENGTH = 6000;
const COMMANDS_PER_TYPE: Readonly<Record<number, number>> = {
  [CommandType.ChatInput]: 100,
  [CommandType.User]: 15,
  [CommandType.Message]: 15,
};

const LOCALES: ReadonlySet<string> = new Set(Object.values(Locale));
const CHANNEL_TYPES: ReadonlySet<number> = new Set(
  Object.values(ChannelType).filter((v): v is number => typeof v === 'number'),
);
const SUB_COMMAND: number = OptionType.Subcommand;
const SUB_COMMAND_GROUP: number = OptionType.SubcommandGroup;
const STRING: number = OptionType.String;
const INTEGER: number = OptionType.Integer;
const NUMBER: number = OptionType.Number;
const CHANNEL: number = OptionType.Channel;
const CHAT_INPUT: number = CommandType.ChatInput;
const WITH_CHOICES: ReadonlySet<number> = new Set([STRING, INTEGER, NUMBER]);

/** Every rule the catalog breaks, each as "<command>: <where>: <what>"; empty when it is valid. */
export function catalogProblems(commands: readonly DeclaredCommand[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const perType = new Map<number, number>();
  for (const command of commands) {
    const type = command.type ?? CHAT_INPUT;
    const key = `${type}:${command.name}`;
    if (seen.has(key)) problems.push(`${command.name}: the name is declared twice`);
    seen.add(key);
    perType.set(type, (perType.get(type) ?? 0) + 1);
    problems.push(...commandProblems(command).map((p) => `${command.name}: ${p}`));
  }
  for (const [type, count] of perType) {
    const limit = COMMANDS_PER_TYPE[type];
    if (limit !== undefined && count > limit) {
      problems.push(`catalog: ${count} commands of type ${type}, at most ${limit} allowed`);
    }
  }
  return problems;
}

function commandProblems(command: DeclaredCommand): string[] {
  const problems: string[] = [];
  const type = command.type ?? CHAT_INPUT;
  if (!(type in COMMANDS_PER_TYPE))
    return [`type ${type} is not a command type this service ships`];
  if (type === CHAT_INPUT) {
    problems.push(...nameProblems('name', command.name));
    problems.push(...textProblems('description', command.description ?? '', 1, 100));
  } else {
    if (command.name.length < 1 || command.name.length > 32) {
      problems.push('name must be 1 to 32 characters');
    }
    if (command.description) problems.push('context-menu commands have no description');
    if (command.options?.length) problems.push('context-menu commands take no options');
  }
  problems.push(...localizationProblems('name_localizations', command.name_localizations));
  problems.push(
    ...localizationProblems('description_localizations', command.description_localizations),
  );
  if (
    command.default_member_permissions != null &&
    !/^\d+$/.test(command.default_member_permissions)
  ) {
    problems.push('default_member_permissions must be a decimal bitfield');
  }
  if (type === CHAT_INPUT) problems.push(...optionListProblems('options', command.options, 0));
  const total = characterCount(command);
  if (total > MAX_TOTAL_CHARACTERS) {
    problems.push(`${total} characters in names, descriptions and values; at most 8000 allowed`);
  }
  return problems;
}

/** Options at `depth` 0 (the command), 1 (in a sub-command or group) or 2 (in a grouped sub-command). */
function optionListProblems(
  path: string,
  options: readonly DeclaredOption[] | undefined,
  depth: number,
): string[] {
  if (!options?.length) return [];
  const problems: string[] = [];
  if (options.length > MAX_OPTIONS) {
    problems.push(`${path}: ${options.length} options, at most ${MAX_OPTIONS} allowed`);
  }
  const subCommands = options.filter((o) => o.type === SUB_COMMAND || o.type === SUB_COMMAND_GROUP);
  if (subCommands.length > 0 && subCommands.length < options.length) {
    problems.push(`${path}: sub-commands cannot be mixed with other options`);
  }
  const names = new Set<string>();
  let optionalSeen = false;
  for (const option of options) {
    const where = `${path}.${option.name}`;
    if (names.has(option.name)) problems.push(`${where}: the name is used twice`);
    names.add(option.name);
    if (option.required) {
      if (optionalSeen) problems.push(`${where}: required options must come before optional ones`);
    } else {
      optionalSeen = true;
    }
    problems.push(...optionProblems(where, option, depth));
  }
  return problems;
}

function optionProblems(where: string, option: DeclaredOption, depth: number): string[] {
  const problems: string[] = [
    ...nameProblems(`${where}: name`, option.name),
    ...textProblems(`${where}: description`, option.description, 1, 100),
    ...localizationProblems(`${where}: name_localizations`, option.name_localizations),
    ...localizationProblems(
      `${where}: description_localizations`,
      option.description_localizations,
    ),
  ];
  const type = option.type;
  if (!Number.isInteger(type) || type < 1 || type > 11) {
    return [...problems, `${where}: type ${type} is not an option type (1-11)`];
  }
  if (type === SUB_COMMAND_GROUP || type === SUB_COMMAND) {
    problems.push(...subCommandProblems(where, option, depth));
  } else if (option.options?.length) {
    problems.push(`${where}: only sub-commands and groups hold options`);
  }
  problems.push(...choiceProblems(where, option));
  problems.push(...rangeProblems(where, option));
  if (option.channel_types !== undefined) {
    if (type !== CHANNEL) problems.push(`${where}: channel_types is for channel options only`);
    for (const channelType of option.channel_types) {
      if (!CHANNEL_TYPES.has(channelType)) {
        problems.push(`${where}: ${channelType} is not a channel type`);
      }
    }
  }
  if (option.autocomplete) {
    if (!WITH_CHOICES.has(type)) {
      problems.push(`${where}: autocomplete is for string, integer and number options only`);
    }
    if (option.choices?.length) problems.push(`${where}: autocomplete cannot be used with choices`);
  }
  return problems;
}

function subCommandProblems(where: string, option: DeclaredOption, depth: number): string[] {
  const problems: string[] = [];
  if (option.required) problems.push(`${where}: sub-commands and groups cannot be required`);
  if (option.type === SUB_COMMAND_GROUP) {
    if (depth > 0) problems.push(`${where}: a group can only sit at the top of a command`);
    if (!option.options?.length) problems.push(`${where}: a group needs sub-commands`);
    if (option.options?.some((child) => child.type !== SUB_COMMAND)) {
      problems.push(`${where}: a group holds sub-commands only`);
    }
  } else if (depth > 1) {
    problems.push(`${where}: sub-commands nest at most inside one group`);
  }
  if (option.type === SUB_COMMAND && option.options?.some((c) => c.type === SUB_COMMAND)) {
    problems.push(`${where}: a sub-command cannot hold sub-commands`);
  }
  return [...problems, ...optionListProblems(where, option.options, depth + 1)];
}

function choiceProblems(where: string, option: DeclaredOption): string[] {
  if (option.choices === undefined) return [];
  const problems: string[] = [];
  if (!WITH_CHOICES.has(option.type)) {
    return [`${where}: choices are for string, integer and number options only`];
  }
  if (option.choices.length > MAX_CHOICES) {
    problems.push(`${where}: ${option.choices.length} choices, at most ${MAX_CHOICES} allowed`);
  }
  for (const choice of option.choices) {
    const at = `${where}: choice "${choice.name}"`;
    problems.push(...textProblems(`${at} name`, choice.name, 1, 100));
    problems.push(...localizationProblems(`${at} name_localizations`, choice.name_localizations));
    if (option.type === STRING) {
      if (typeof choice.value !== 'string') problems.push(`${at}: the value must be a string`);
      else problems.push(...textProblems(`${at} value`, choice.value, 1, 100));
    } else if (typeof choice.value !== 'number' || !Number.isFinite(choice.value)) {
      problems.push(`${at}: the value must be a number`);
    } else if (option.type === INTEGER && !Number.isSafeInteger(choice.value)) {
      problems.push(`${at}: the value must be an integer of at most 2^53-1`);
    }
  }
  return problems;
}

function rangeProblems(where: string, option: DeclaredOption): string[] {
  const problems: string[] = [];
  const numeric = option.type === INTEGER || option.type === NUMBER;
  for (const bound of ['min_value', 'max_value'] as const) {
    const value = option[bound];
    if (value === undefined) continue;
    if (!numeric) problems.push(`${where}: ${bound} is for integer and number options only`);
    else if (Math.abs(value) > MAX_INTEGER) problems.push(`${where}: ${bound} is out of range`);
    else if (option.type === INTEGER && !Number.isInteger(value)) {
      problems.push(`${where}: ${bound} of an integer option must be an integer`);
    }
  }
  if (option.min_value !== undefined && option.max_value !== undefined) {
    if (option.min_value > option.max_value) problems.push(`${where}: min_value exceeds max_value`);
  }
  for (const [bound, low] of [
    ['min_length', 0],
    ['max_length', 1],
  ] as const) {
    const value = option[bound];
    if (value === undefined) continue;
    if (option.type !== STRING) problems.push(`${where}: ${bound} is for string options only`);
    else if (!Number.isInteger(value) || value < low || value > MAX_STRING_LENGTH) {
      problems.push(`${where}: ${bound} must be an integer from ${low} to ${MAX_STRING_LENGTH}`);
    }
  }
  if (option.min_length !== undefined && option.max_length !== undefined) {
    if (option.min_length > option.max_length) {
      problems.push(`${where}: min_length exceeds max_length`);
    }
  }
  return problems;
}

function nameProblems(where: string, name: string): string[] {
  if (!CHAT_INPUT_NAME.test(name)) {
    return [`${where} "${name}" must be 1 to 32 letters, digits, "-" or "_"`];
  }
  return name === name.toLowerCase() ? [] : [`${where} "${name}" must be lowercase`];
}

function textProblems(where: string, text: string, min: number, max: number): string[] {
  const length = [...text].length;
  return length < min || length > max ? [`${where} must be ${min} to ${max} characters`] : [];
}

function localizationProblems(where: string, localizations: Localizations): string[] {
  if (!localizations) return [];
  return Object.keys(localizations)
    .filter((locale) => !LOCALES.has(locale))
    .map((locale) => `${where}: "${locale}" is not a locale of the platform`);
}

/** Names, descriptions and choice values, each with its longest localization (the platform's count). */
function characterCount(command: DeclaredCommand): number {
  const longest = (text: string, localized: Localizations): number =>
    Math.max(text.length, ...Object.values(localized ?? {}).map((v) => v?.length ?? 0));
  const ofOption = (option: DeclaredOption): number =>
    longest(option.name, option.name_localizations) +
    longest(option.description, option.description_localizations) +
    (option.choices ?? []).reduce(
      (sum, choice) =>
        sum + longest(choice.name, choice.name_localizations) + String(choice.value).length,
      0,
    ) +
    (option.options ?? []).reduce((sum, child) => sum + ofOption(child), 0);
  return (
    longest(command.name, command.name_localizations) +
    longest(command.description ?? '', command.description_localizations) +
    (command.options ?? []).reduce((sum, option) => sum + ofOption(option), 0)
  );
}
