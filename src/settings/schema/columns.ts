import type {
  ColumnSchema,
  InnerColumnType,
  Operation,
  StringKind,
} from 'src/settings/schema/settings-schema';

/** Shorthands for declaring columns; every field of the published Column is still spelled out. */
interface ColumnOptions {
  description: string;
  placeholder?: string;
  nullable?: boolean;
  primaryKey?: boolean;
  hidden?: Operation[];
  readonly?: Operation[];
  /** What Create stores when the field is left out (the column is then optional on Create). */
  default?: unknown;
}

export function scalar(
  id: string,
  name: string,
  inner: InnerColumnType,
  options: ColumnOptions,
): ColumnSchema {
  return column(id, name, { type: 'Scalar', inner }, options);
}

export function array(
  id: string,
  name: string,
  inner: InnerColumnType,
  options: ColumnOptions,
): ColumnSchema {
  return column(id, name, { type: 'Array', inner }, options);
}

export function info(id: string, name: string, message: string): ColumnSchema {
  return column(
    id,
    name,
    { type: 'Widget', inner: { type: 'Info', message } },
    { description: message },
  );
}

export const text = (
  kind: StringKind,
  extra: Partial<Omit<InnerColumnType & { type: 'String' }, 'type' | 'kind'>> = {},
): InnerColumnType => ({
  type: 'String',
  kind,
  ...extra,
});

/**
 * The key of a setting with one entry per guild: clients send `default`. (Every setting has a
 * primary key, so a per-guild configuration names its single profile.)
 */
export function profileColumn(): ColumnSchema {
  return scalar('id', 'Profile', text('normal', { allowed_values: ['default'] }), {
    description: 'The configuration profile (one per guild)',
    placeholder: 'default',
    primaryKey: true,
  });
}

/** `created_at`, `created_by`, `last_updated_at`, `last_updated_by`: filled in by the engine. */
export function auditColumns(): ColumnSchema[] {
  const auto: Operation[] = ['Create', 'Update'];
  return [
    scalar('created_at', 'Created at', text('timestamp'), {
      description: 'When the entry was created',
      readonly: auto,
    }),
    scalar('created_by', 'Created by', text('user'), {
      description: 'Who created the entry',
      readonly: auto,
    }),
    scalar('last_updated_at', 'Last updated at', text('timestamp'), {
      description: 'When the entry last changed',
      readonly: auto,
    }),
    scalar('last_updated_by', 'Last updated by', text('user'), {
      description: 'Who last changed the entry',
      readonly: auto,
    }),
  ];
}

function column(
  id: string,
  name: string,
  column_type: ColumnSchema['column_type'],
  options: ColumnOptions,
): ColumnSchema {
  return {
    id,
    name,
    description: options.description,
    placeholder: options.placeholder ?? null,
    nullable: options.nullable ?? false,
    primary_key: options.primaryKey ?? false,
    hidden: options.hidden ?? [],
    readonly: options.readonly ?? [],
    column_type,
    ...(options.default === undefined ? {} : { default: options.default }),
  };
}
