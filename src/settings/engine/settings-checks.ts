import { AppException, type ErrorDetail } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { summariseDetails } from 'src/common/validation/validation-details';
import type { GuildContext } from 'src/guilds/guild-context';
import { missingPermissions, permissionNames } from 'src/guilds/platform-permissions';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import { offers, storedColumns, valuesOf } from 'src/settings/engine/settings-rows';
import type { Caller } from 'src/settings/engine/settings-callers';
import type { ExecutableOperation } from 'src/settings/schema/settings-schema';
import type { RegisteredSetting, SettingsRegistry } from 'src/settings/schema/settings-registry';

/** What `SettingsService.execute` takes: a setting, one of its operations, and the operation's fields. */
export interface SettingsRequest {
  setting: string;
  operation: ExecutableOperation;
  fields: unknown;
}

/** A request that passed the checks made before any row is read. */
export interface CheckedRequest {
  setting: RegisteredSetting;
  operation: ExecutableOperation;
  permission: string;
  /** Validated and prepared (the setting's `prepare` applied to a write's rows). */
  fields: unknown;
}

/**
 * The checks that need no stored row, in docs/settings-engine.md's order: the setting and
 * operation, the caller's `<setting>.<operation>` permission (`requirePermission`; a write is
 * checked again against the rows it is applied to), the fields, then references and the bot's
 * permissions in the live guild.
 */
export function checkRequest(
  registry: SettingsRegistry,
  requirePermission: (caller: Caller, permission: string) => void,
  caller: Caller,
  request: SettingsRequest,
): CheckedRequest {
  const setting = registry.get(request.setting);
  if (!setting) throw new AppException(ErrorCode.NotFound, `Unknown setting ${request.setting}`);
  const operation = request.operation;
  if (!offers(setting, operation)) {
    const message = `${setting.schema.id} does not offer ${operation}`;
    throw new AppException(ErrorCode.BadRequest, message, [{ field: 'operation', message }]);
  }
  const permission = `${setting.schema.id}.${operation.toLowerCase()}`;
  requirePermission(caller, permission);
  const checked = setting.validator.check(operation, request.fields);
  if (!checked.ok) throw invalidFields(checked.details);
  let fields = checked.fields;
  const prepare = setting.prepare;
  if (prepare && operation !== 'View') {
    fields = Array.isArray(fields)
      ? (fields as SettingRow[]).map(prepare)
      : prepare(fields as SettingRow);
  }
  if (operation !== 'View' && operation !== 'Delete') {
    const problems = [
      ...referenceProblems(setting, caller.context, fields),
      ...botProblems(setting, caller.context, fields),
    ];
    if (problems.length > 0) throw invalidFields(problems);
  }
  return { setting, operation, permission, fields };
}

function invalidFields(details: ErrorDetail[]): AppException {
  return new AppException(
    ErrorCode.BadRequest,
    summariseDetails(details, 'Invalid fields'),
    details,
  );
}

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
