import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/setting-definition';
import { FieldsValidator } from 'src/settings/schema/fields-validator';
import { catalogSchemaProblems } from 'src/settings/schema/schema-checks';

export class InvalidSettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Setting declarations are inconsistent: ${problems.join('; ')}`);
    this.name = 'InvalidSettingsError';
  }
}

/** A declared setting with what the engine derives from it once. */
export interface RegisteredSetting extends SettingDefinition {
  validator: FieldsValidator;
  /** The `validation_template` as served (the validator's document, as a string). */
  validationTemplate: string;
}

/**
 * Every setting declared by any module (providers marked `@DeclareSetting()`), checked at boot: an
 * inconsistent declaration stops the service, naming the setting.
 */
@Injectable()
export class SettingsRegistry implements OnModuleInit {
  private readonly settings = new Map<string, RegisteredSetting>();
  private published: Record<string, { type: 'Ok'; data: unknown[] }> = {};

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const definitions = this.discovery
      .getProviders({ metadataKey: DeclareSetting.KEY })
      .map((wrapper) => (wrapper.instance as SettingProvider).definition);
    const problems = catalogSchemaProblems(definitions.map((definition) => definition.schema));
    if (problems.length > 0) throw new InvalidSettingsError(problems);
    for (const definition of definitions) {
      const validator = new FieldsValidator(definition.schema);
      this.settings.set(definition.schema.id, {
        ...definition,
        validator,
        validationTemplate: JSON.stringify(validator.document),
      });
    }
    this.published = groupByModule(this.all());
  }

  /** `GET /guilds/{id}/settings`: the schemas by declaring module (the same for every guild). */
  groups(): Record<string, { type: 'Ok'; data: unknown[] }> {
    return this.published;
  }

  get(id: string): RegisteredSetting | undefined {
    return this.settings.get(id);
  }

  all(): RegisteredSetting[] {
    return [...this.settings.values()];
  }
}

function groupByModule(
  settings: RegisteredSetting[],
): Record<string, { type: 'Ok'; data: unknown[] }> {
  const groups: Record<string, { type: 'Ok'; data: unknown[] }> = {};
  for (const setting of settings) {
    groups[setting.group] ??= { type: 'Ok', data: [] };
    groups[setting.group].data.push({
      ...setting.schema,
      validation_template: setting.validationTemplate,
    });
  }
  return groups;
}
