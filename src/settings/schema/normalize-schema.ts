import {
  DEFAULT_MAX_STRING_LENGTH,
  type ColumnSchema,
  type InnerColumnType,
  type SettingSchema,
} from 'src/settings/schema/settings-schema';
import { numberRange, SAFE_RANGE, type StoredColumn } from 'src/settings/schema/storage-checks';

/**
 * The schema as it is published and enforced: every optional field of a declaration filled in
 * with the value the server applies, so every listed field appears (String `min_length` 0,
 * `max_length` the default cap, `allowed_values` and `suggestions` []; Integer and Float `min` and
 * `max` the declared bounds, else what the entity's column type holds). Declarations stay short,
 * and no setting can publish less. Run once, at registration, on a checked declaration.
 */
export function normalizeSchema(
  schema: SettingSchema,
  stored: readonly StoredColumn[] = [],
): SettingSchema {
  const byProperty = new Map(stored.map((column) => [column.property, column]));
  return {
    id: schema.id,
    name: schema.name,
    description: schema.description,
    icon: schema.icon,
    index_by: schema.index_by ?? null,
    columns: schema.columns.map((column) => normalizeColumn(column, byProperty.get(column.id))),
    operations: [...schema.operations],
    title_template: schema.title_template,
    view_template: schema.view_template,
    postsend_template: schema.postsend_template,
    footer: schema.footer ? { end_text: schema.footer.end_text } : null,
  };
}

function normalizeColumn(column: ColumnSchema, stored: StoredColumn | undefined): ColumnSchema {
  const type = column.column_type;
  return {
    id: column.id,
    name: column.name,
    description: column.description,
    placeholder: column.placeholder ?? null,
    nullable: column.nullable ?? false,
    primary_key: column.primary_key ?? false,
    hidden: [...(column.hidden ?? [])],
    readonly: [...(column.readonly ?? [])],
    column_type:
      type.type === 'Widget'
        ? { type: 'Widget', inner: { ...type.inner } }
        : { type: type.type, inner: normalizeInner(type.inner, stored) },
    default: column.default ?? null,
  };
}

function normalizeInner(inner: InnerColumnType, stored: StoredColumn | undefined): InnerColumnType {
  switch (inner.type) {
    case 'String':
      return {
        type: 'String',
        kind: inner.kind,
        min_length: inner.min_length ?? 0,
        max_length: inner.max_length ?? DEFAULT_MAX_STRING_LENGTH,
        allowed_values: [...(inner.allowed_values ?? [])],
        suggestions: [...(inner.suggestions ?? [])],
      };
    case 'Integer':
    case 'Float': {
      const range = (stored && numberRange(inner, stored)) ?? SAFE_RANGE;
      return {
        type: inner.type,
        min: inner.min ?? Math.max(range.min, SAFE_RANGE.min),
        max: inner.max ?? Math.min(range.max, SAFE_RANGE.max),
      };
    }
    case 'BitFlag':
      return { type: 'BitFlag', values: { ...inner.values } };
    case 'Json':
      return { type: 'Json', style: inner.style };
    case 'Boolean':
      return { type: 'Boolean' };
  }
}
