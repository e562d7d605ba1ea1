import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { RowDiff } from 'src/settings/engine/settings-revision.entity';
import { stableJson } from 'src/settings/engine/settings-rows';

/**
 * What changed from `before` to `after` (null: the entry did not exist), column by column; values
 * are compared as JSON, so arrays and objects with the same content are equal. Columns are listed
 * in the order the rows name them.
 */
export function diffRows(before: SettingRow | null, after: SettingRow | null): RowDiff {
  const diff: RowDiff = {};
  const columns = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const column of columns) {
    const was = before?.[column] ?? null;
    const now = after?.[column] ?? null;
    if (before !== null && after !== null && stableJson(was) === stableJson(now)) continue;
    diff[column] = { before: before === null ? null : was, after: after === null ? null : now };
  }
  return diff;
}
