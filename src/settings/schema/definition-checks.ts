import type { SettingDefinition } from 'src/settings/schema/settings-definition';
import type { ColumnSchema } from 'src/settings/schema/settings-schema';

/**
 * What a declaration names by column id beyond its schema: each must be a column of the setting
 * whose values name what the rule is about (a channel for `botNeeds.channelColumns` and a
 * channel check, a role for a role check). A misspelt column would otherwise never be checked.
 */
export function definitionProblems(definition: SettingDefinition): string[] {
  const { id, columns } = definition.schema;
  const problems: string[] = [];
  const expect = (columnId: string, kind: 'channel' | 'role', what: string): void => {
    const column = columns.find((candidate) => candidate.id === columnId);
    const found = column === undefined ? null : stringKindOf(column);
    if (found === kind) return;
    problems.push(
      column === undefined
        ? `${id}: ${what} names the column ${columnId}, which the setting does not have`
        : `${id}: ${what} names the column ${columnId}, whose values are ${found === null ? 'not text' : `of the kind ${found}`}; it needs a ${kind} column`,
    );
  };
  for (const columnId of Object.keys(definition.botNeeds?.channelColumns ?? {})) {
    expect(columnId, 'channel', 'botNeeds.channelColumns');
  }
  for (const [columnId, checks] of Object.entries(definition.guildChecks ?? {})) {
    for (const check of checks)
      expect(columnId, check.kind, `a ${check.kind} check in guildChecks`);
  }
  return problems;
}

/** The kind of a String column's values (one value, or each of a list's); null for any other. */
function stringKindOf(column: ColumnSchema): string | null {
  const type = column.column_type;
  if (type.type === 'Widget' || type.inner.type !== 'String') return null;
  return type.inner.kind;
}
