import type { DeclaredCommand, DeclaredChoice, DeclaredOption } from 'src/commands/catalog-rules';
import type {
  BotStateDto,
  CommandChoiceDto,
  CommandDto,
  CommandOptionDto,
} from 'src/commands/dto/bot-state.dto';

/**
 * The catalog in the spec's Command/Option/Choice shape: every field present, absent maps as `{}`,
 * absent lists as `[]`, absent bounds as null.
 */
export function toBotState(catalog: readonly DeclaredCommand[]): BotStateDto {
  return { commands: catalog.map(toCommand) };
}

function toCommand(command: DeclaredCommand): CommandDto {
  return {
    name: command.name,
    name_localizations: localizations(command.name_localizations),
    description: command.description ?? '',
    description_localizations: localizations(command.description_localizations),
    integration_types: [...(command.integration_types ?? [])],
    nsfw: command.nsfw ?? false,
    type: command.type ?? 1,
    options: (command.options ?? []).map(toOption),
  };
}

function toOption(option: DeclaredOption): CommandOptionDto {
  return {
    name: option.name,
    name_localizations: localizations(option.name_localizations),
    description: option.description,
    description_localizations: localizations(option.description_localizations),
    autocomplete: option.autocomplete ?? false,
    channel_types: [...(option.channel_types ?? [])],
    choices: (option.choices ?? []).map(toChoice),
    max_length: option.max_length ?? null,
    min_length: option.min_length ?? null,
    max_value: option.max_value ?? null,
    min_value: option.min_value ?? null,
    required: option.required ?? false,
    type: option.type,
    options: (option.options ?? []).map(toOption),
  };
}

function toChoice(choice: DeclaredChoice): CommandChoiceDto {
  return {
    name: choice.name,
    name_localizations: localizations(choice.name_localizations),
    value: choice.value,
  };
}

function localizations(
  map: Partial<Record<string, string | null>> | null | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}
