import type { ErrorDetail } from 'src/common/errors/app.exception';
import type { GuildContext } from 'src/guilds/guild-context';
import { missingPermissions, permissionNames } from 'src/guilds/platform-permissions';
import type { SettingRow } from 'src/settings/setting-definition';
import { storedColumns, valuesOf } from 'src/settings/setting-rows';
import type { RegisteredSetting } from 'src/settings/settings-registry';

/** What a write's values must satisfy in the live guild, beyond the setting's schema. */

/** Role and channel values must name a role or channel of this guild. */
export function referenceProblems(
  setting: RegisteredSetting,
  context: GuildContext,
  fields: unknown,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
  for (const column of storedColumns(setting)) {
    const type = column.column_type;
    if (type.type === 'Widget' || type.inner.type !== 'String') continue;
    const kind = type.inner.kind;
    if (kind !== 'role' && kind !== 'channel') continue;
    for (const row of rows) {
      for (const value of valuesOf(row[column.id])) {
        const known = kind === 'role' ? context.role(value) : context.channel(value);
        if (!known) {
          problems.push({ field: column.id, message: `${value} is not a ${kind} of this guild` });
        }
      }
    }
  }
  return problems;
}

/** The bot must hold what the setting needs it to do, in the guild and in the channels named. */
export function botProblems(
  setting: RegisteredSetting,
  context: GuildContext,
  fields: unknown,
): ErrorDetail[] {
  const needs = setting.botNeeds;
  if (!needs) return [];
  const problems: ErrorDetail[] = [];
  if (needs.guild !== undefined) {
    const missing = missingPermissions(context.bot.basePermissions, needs.guild);
    if (missing !== 0n) {
      problems.push({
        field: 'fields',
        message: `The bot needs ${permissionNames(missing).join(', ')} in this guild`,
      });
    }
  }
  const row = Array.isArray(fields) ? {} : (fields as SettingRow);
  for (const [columnId, required] of Object.entries(needs.channelColumns ?? {})) {
    for (const channelId of valuesOf(row[columnId])) {
      const channel = context.channel(channelId);
      if (!channel) continue;
      const missing = missingPermissions(context.bot.permissionsIn(channel), required);
      if (missing !== 0n) {
        problems.push({
          field: columnId,
          message: `The bot needs ${permissionNames(missing).join(', ')} in channel ${channelId}`,
        });
      }
    }
  }
  return problems;
}
