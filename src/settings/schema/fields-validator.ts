import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { ErrorDetail } from 'src/common/errors/app.exception';
import {
  hasDefault,
  identifiesRow,
  isStored,
  type ColumnSchema,
  type ExecutableOperation,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';
import { isStorableTimestamp } from 'src/common/validation/date-time';
import {
  validationSchema,
  valueSchema,
  type JsonSchema,
} from 'src/settings/schema/validation-schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type FieldsCheck = { ok: true; fields: unknown } | { ok: false; details: ErrorDetail[] };

const KIND_MESSAGES: Readonly<Record<string, string>> = {
  user: 'must be a user id (a snowflake)',
  role: 'must be a role id (a snowflake)',
  channel: 'must be a channel id (a snowflake)',
  interval: 'must be a whole number of seconds, as a string',
  permission: 'must be one permission string, e.g. "guildroles.view" or "~rpc.ban"',
};

/**
 * Validates a setting operation's `fields` against the setting's own `validation_template` (ajv,
 * JSON Schema 2020-12): the document clients receive is the one the server enforces. Every failure
 * is reported; read-only values are dropped from what is returned.
 */
export class FieldsValidator {
  readonly document: JsonSchema;
  private readonly byOperation = new Map<ExecutableOperation, ValidateFunction>();
  private readonly columns: ReadonlyMap<string, ColumnSchema>;
  private readonly ajv: Ajv2020;

  constructor(private readonly schema: SettingSchema) {
    this.document = validationSchema(schema);
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    this.ajv = ajv;
    // Stricter than JSON Schema's uuid (which allows a `urn:uuid:` prefix): PostgreSQL's uuid form.
    ajv.addFormat('uuid', { type: 'string', validate: UUID });
    // Stricter than JSON Schema's date-time: only instants that JavaScript and PostgreSQL store.
    ajv.addFormat('date-time', { type: 'string', validate: isStorableTimestamp });
    ajv.addSchema(this.document);
    const id = this.document.$id as string;
    for (const operation of Object.keys(this.document.$defs as object)) {
      const validate = ajv.getSchema(`${id}#/$defs/${operation}`);
      if (validate) this.byOperation.set(operation as ExecutableOperation, validate);
    }
    this.columns = new Map(schema.columns.map((column) => [column.id, column]));
  }

  check(operation: ExecutableOperation, fields: unknown): FieldsCheck {
    const validate = this.byOperation.get(operation);
    if (!validate) {
      return {
        ok: false,
        details: [{ field: 'operation', message: `${operation} is not offered` }],
      };
    }
    if (!validate(fields)) {
      return {
        ok: false,
        details: (validate.errors ?? []).map((error) => this.detail(error, operation)),
      };
    }
    const checked = this.withoutReadOnly(operation, fields);
    return { ok: true, fields: operation === 'Create' ? this.withDefaults(checked) : checked };
  }

  /**
   * Each declared default the column itself would refuse, as "<setting>: …" (checked at boot: a
   * default is stored without passing through `check`).
   */
  defaultProblems(): string[] {
    const problems: string[] = [];
    for (const column of this.columns.values()) {
      if (!hasDefault(column) || !isStored(column)) continue;
      if (!this.ajv.validate(valueSchema(column), column.default)) {
        const said = (this.ajv.errors ?? []).map((error) => this.message(error, [column.id]));
        problems.push(
          `${this.schema.id}: column "${column.id}": the default ${JSON.stringify(column.default)} ${said.join(', ')}`,
        );
      }
    }
    return problems;
  }

  /** Create's fields with every declared default the caller left out. */
  private withDefaults(fields: unknown): unknown {
    const given = fields as Record<string, unknown>;
    const defaults = [...this.columns.values()].filter(
      (column) =>
        hasDefault(column) &&
        !(column.id in given) &&
        isStored(column) &&
        !column.readonly.includes('Create'),
    );
    if (defaults.length === 0) return fields;
    return {
      ...Object.fromEntries(defaults.map((column) => [column.id, structuredClone(column.default)])),
      ...given,
    };
  }

  private withoutReadOnly(operation: ExecutableOperation, fields: unknown): unknown {
    if (operation !== 'Create' && operation !== 'Update') return fields;
    return Object.fromEntries(
      Object.entries(fields as Record<string, unknown>).filter(([id]) => {
        const column = this.columns.get(id);
        if (column === undefined || !isStored(column)) return false;
        // On Update the key names the row, and the version is checked, though neither changes.
        if (identifiesRow(column) && operation === 'Update') return true;
        return !column.readonly.includes(operation);
      }),
    );
  }

  private detail(error: ErrorObject, operation: ExecutableOperation): ErrorDetail {
    const path = error.instancePath.split('/').slice(1);
    if (error.keyword === 'required') {
      const field = [...path, (error.params as { missingProperty: string }).missingProperty].join(
        '.',
      );
      return { field, message: `${field} is required for ${operation}` };
    }
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      const field = [...path, extra].join('.');
      const known = this.columns.has(extra);
      return {
        field,
        message: known
          ? `${field} cannot be sent with ${operation}`
          : `${field} is not a field of ${this.schema.id}`,
      };
    }
    const field = path.length > 0 ? path.join('.') : 'fields';
    return { field, message: `${field} ${this.message(error, path)}` };
  }

  private message(error: ErrorObject, path: string[]): string {
    const column = this.columns.get(path.find((segment) => this.columns.has(segment)) ?? '');
    const type = column?.column_type;
    const inner = type && type.type !== 'Widget' ? type.inner : undefined;
    if (error.keyword === 'pattern' && inner?.type === 'String') {
      return KIND_MESSAGES[inner.kind] ?? 'has the wrong form';
    }
    if (error.keyword === 'format') {
      return error.params.format === 'uuid' ? 'must be a UUID' : 'must be an ISO 8601 timestamp';
    }
    if (error.keyword === 'enum' && inner?.type === 'BitFlag') {
      return `may only combine the flags ${Object.entries(inner.values)
        .map(([name, bit]) => `${name} (${bit})`)
        .join(', ')}`;
    }
    if (error.keyword === 'enum') {
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues
        .map((value) => JSON.stringify(value))
        .join(', ')}`;
    }
    return error.message ?? 'is not valid';
  }
}
