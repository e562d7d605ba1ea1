import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type ObjectLiteral } from 'typeorm';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';
import { FieldsValidator } from 'src/settings/schema/fields-validator';
import { normalizeSchema } from 'src/settings/schema/normalize-schema';
import { sampleFields } from 'src/settings/schema/setting-samples';
import { catalogSchemaProblems } from 'src/settings/schema/schema-checks';
import { definitionProblems } from 'src/settings/schema/definition-checks';
import { storageProblems, type StoredColumn } from 'src/settings/schema/storage-checks';
import {
  VERSION_COLUMN,
  versionColumn,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';

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

  constructor(
    private readonly discovery: DiscoveryService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    const definitions = this.discovery
      .getProviders({ metadataKey: DeclareSetting.KEY })
      .map((wrapper) => (wrapper.instance as SettingProvider).definition);
    const problems = catalogSchemaProblems(definitions.map((definition) => definition.schema));
    const stored = new Map<SettingDefinition, StoredColumn[]>();
    for (const definition of definitions) {
      problems.push(...definitionProblems(definition));
      const columns = this.storedColumns(definition.entity);
      if (columns === null) {
        problems.push(
          `${definition.schema.id} (entity ${definition.entity.name}): the entity is not registered with TypeORM`,
        );
        continue;
      }
      stored.set(definition, columns);
      problems.push(...storageProblems(definition.schema, definition.entity.name, columns));
    }
    if (problems.length > 0) throw new InvalidSettingsError(problems);
    for (const definition of definitions) {
      // Published and enforced with every field filled in (and number bounds the column holds),
      // with the row version where the entity keeps one.
      const columns = stored.get(definition) ?? [];
      const schema = normalizeSchema(withVersionColumn(definition.schema, columns), columns);
      const validator = new FieldsValidator(schema);
      problems.push(...validator.defaultProblems());
      for (const [operation, fields] of Object.entries(sampleFields(definition) ?? {})) {
        const checked = validator.check(operation as 'Create' | 'Update', fields);
        if (!checked.ok) {
          const said = checked.details.map((detail) => `${detail.field} ${detail.message}`);
          problems.push(`${schema.id}: its sample ${operation} is refused: ${said.join(', ')}`);
        }
      }
      this.settings.set(schema.id, {
        ...definition,
        schema,
        validator,
        validationTemplate: JSON.stringify(validator.document),
      });
    }
    if (problems.length > 0) throw new InvalidSettingsError(problems);
    this.published = groupByModule(this.all());
  }

  /** The entity's columns as PostgreSQL stores them, or null for an entity TypeORM does not know. */
  private storedColumns(entity: new () => ObjectLiteral): StoredColumn[] | null {
    if (!this.dataSource.hasMetadata(entity)) return null;
    return this.dataSource.getMetadata(entity).columns.map((column) => ({
      property: column.propertyName,
      type: this.dataSource.driver.normalizeType(column),
      length: column.length ? Number(column.length) : null,
      precision: column.precision ?? null,
      scale: column.scale ?? null,
      nullable: column.isNullable,
      hasDefault:
        column.default !== undefined ||
        column.isGenerated ||
        column.isCreateDate ||
        column.isUpdateDate ||
        column.isVersion,
      isVersion: column.isVersion,
    }));
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

/**
 * Every setting stored on an entity with a `version` row version (all that extend
 * `SettingRowEntity`) publishes it as a column: read with each row, sent back on Update and Delete.
 */
function withVersionColumn(schema: SettingSchema, stored: readonly StoredColumn[]): SettingSchema {
  const versioned = stored.some((column) => column.property === VERSION_COLUMN && column.isVersion);
  return versioned ? { ...schema, columns: [...schema.columns, versionColumn()] } : schema;
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
