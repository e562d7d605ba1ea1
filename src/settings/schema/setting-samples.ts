import type { SettingDefinition, SettingRow } from 'src/settings/schema/settings-definition';
import { primaryKeyOf } from 'src/settings/schema/settings-schema';

/** Stands for a key the service chooses (a uuid) in an Update example. */
export const SAMPLE_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * The `fields` of a setting's sample Create and Update (`samples` in its definition): the Update
 * names the created entry by its key, which the service chooses when Create cannot name it.
 */
export function sampleFields(
  definition: Pick<SettingDefinition, 'schema' | 'samples'>,
): { Create: SettingRow; Update: SettingRow } | null {
  const { samples, schema } = definition;
  if (!samples) return null;
  const key = Object.fromEntries(
    primaryKeyOf(schema).map((column) => [column.id, samples.create[column.id] ?? SAMPLE_UUID]),
  );
  return { Create: samples.create, Update: { ...key, ...samples.update } };
}
