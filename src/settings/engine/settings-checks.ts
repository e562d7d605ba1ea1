import { AppException, type ErrorDetail } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { summariseDetails } from 'src/common/validation/validation-details';
import type { GuildContext } from 'src/guilds/guild-context';
import { missingPermissions, permissionNames } from 'src/guilds/platform-permissions';
import { parsePermission } from 'src/common/permissions/permission-grammar';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import type { GuildColumnCheck } from 'src/settings/schema/guild-checks';
import { offers, storedColumns, valuesOf } from 'src/settings/engine/settings-rows';
import type { Caller } from 'src/settings/engine/settings-callers';
import type { ExecutableOperation, StringKind } from 'src/settings/schema/settings-schema';
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
      ...permissionProblems(registry, setting, fields),
      ...referenceProblems(setting, caller.context, fields),
      ...guildRuleProblems(setting, caller.context, fields),
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

const OPERATIONS: readonly ExecutableOperation[] = [
  'View',
  'Create',
  'Update',
  'Delete',
  'Reorder',
];

/**
 * A permission string whose namespace names a declared setting must name one of its permissions
 * (`guildroles.view`, …, `guildroles.*`, `guildroles.@clear`): `guildroles.veiw` would be stored
 * and never grant anything. Other namespaces belong to the bot (`rpc.kick`) and are not known
 * here. docs/permissions.md, "Permission strings".
 */
export function permissionProblems(
  registry: SettingsRegistry,
  setting: RegisteredSetting,
  fields: unknown,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const { column, value } of textValues(setting, fields, ['permission'])) {
    const { namespace, perm } = parsePermission(value);
    const named = registry.get(namespace);
    if (!named) continue;
    const known = [
      ...OPERATIONS.filter((operation) => offers(named, operation)).map((operation) =>
        operation.toLowerCase(),
      ),
      '*',
      '@clear',
    ];
    if (known.includes(perm)) continue;
    const listed = known.map((name) => `${namespace}.${name}`).join(', ');
    problems.push({
      field: column,
      message: `${value} is not a permission of the setting ${namespace}: it has ${listed}`,
    });
  }
  return problems;
}

/**
 * Role and channel values must name a role or channel of this guild. The platform hides the
 * channels the bot cannot view (docs/guild-state.md), so a channel is one the bot can view.
 */
export function referenceProblems(
  setting: RegisteredSetting,
  context: GuildContext,
  fields: unknown,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const { column, kind, value } of textValues(setting, fields, ['role', 'channel'])) {
    const known = kind === 'role' ? context.role(value) : context.channel(value);
    if (!known) {
      const what =
        kind === 'channel'
          ? 'a channel of this guild that the bot can view'
          : `a ${kind} of this guild`;
      problems.push({ field: column, message: `${value} is not ${what}` });
    }
  }
  return problems;
}

/**
 * The setting's own rules on what its channel and role values name (`guildChecks`): run on values
 * that name a channel or role of the guild (`referenceProblems` reports the others).
 */
export function guildRuleProblems(
  setting: RegisteredSetting,
  context: GuildContext,
  fields: unknown,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
  for (const [column, checks] of Object.entries(setting.guildChecks ?? {})) {
    for (const row of rows) {
      for (const value of valuesOf(row[column])) {
        for (const check of checks) {
          const problem = problemOf(check, value, context);
          if (problem !== null) problems.push({ field: column, message: problem });
        }
      }
    }
  }
  return problems;
}

function problemOf(check: GuildColumnCheck, value: string, context: GuildContext): string | null {
  if (check.kind === 'channel') {
    const channel = context.channel(value);
    return channel ? check.problem(channel, context) : null;
  }
  const role = context.role(value);
  return role ? check.problem(role, context) : null;
}

/** Every value a write sends in the setting's text columns of the given kinds. */
function* textValues(
  setting: RegisteredSetting,
  fields: unknown,
  kinds: readonly StringKind[],
): Generator<{ column: string; kind: StringKind; value: string }> {
  const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
  for (const column of storedColumns(setting)) {
    const type = column.column_type;
    if (type.type === 'Widget' || type.inner.type !== 'String') continue;
    const kind = type.inner.kind;
    if (!kinds.includes(kind)) continue;
    for (const row of rows) {
      for (const value of valuesOf(row[column.id])) yield { column: column.id, kind, value };
    }
  }
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
