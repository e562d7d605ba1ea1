import { isDeepStrictEqual } from 'node:util';
import type { DeclaredCommand } from 'src/commands/catalog-rules';
import { toBotState } from 'src/commands/bot-state';

export interface SyncPlan {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
}

/** A remote command as the platform lists it; the fields it adds (ids, versions) are ignored. */
export type RemoteCommand = DeclaredCommand & { id?: string };

/**
 * What installing `declared` over `remote` changes, command by command (identified by type and
 * name), comparing everything the platform stores after filling in its defaults.
 */
export function planSync(
  declared: readonly DeclaredCommand[],
  remote: readonly RemoteCommand[],
): SyncPlan {
  const remoteByKey = new Map(remote.map((command) => [keyOf(command), command]));
  const plan: SyncPlan = { added: [], updated: [], removed: [], unchanged: [] };
  for (const command of declared) {
    const existing = remoteByKey.get(keyOf(command));
    remoteByKey.delete(keyOf(command));
    if (!existing) plan.added.push(labelOf(command));
    else if (isDeepStrictEqual(comparable(command), comparable(existing))) {
      plan.unchanged.push(labelOf(command));
    } else plan.updated.push(labelOf(command));
  }
  plan.removed.push(...[...remoteByKey.values()].map(labelOf));
  return plan;
}

export function hasChanges(plan: SyncPlan): boolean {
  return plan.added.length + plan.updated.length + plan.removed.length > 0;
}

const TYPE_LABELS: Readonly<Record<number, string>> = { 2: 'user menu', 3: 'message menu' };

function labelOf(command: DeclaredCommand): string {
  const kind = TYPE_LABELS[command.type ?? 1];
  return kind ? `${command.name} (${kind})` : `/${command.name}`;
}

function keyOf(command: DeclaredCommand): string {
  return `${command.type ?? 1}:${command.name}`;
}

function comparable(command: DeclaredCommand): unknown {
  const [shape] = toBotState([command]).commands;
  return {
    ...shape,
    integration_types: [...(command.integration_types ?? [0])].sort(),
    contexts: command.contexts ? [...command.contexts].sort() : null,
    default_member_permissions: command.default_member_permissions ?? null,
  };
}
