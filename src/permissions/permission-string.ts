/**
 * The bot's permission strings (kittycat-rules.md §1–4): `namespace.perm`, `~` to negate, `*` for
 * every perm of a namespace, `global` for every namespace, `@clear` to reset while resolving. Pure
 * functions; permissions are compared by their canonical form everywhere. The grammar of one string
 * (parse, canonical form) is in `src/common/permissions/permission-grammar.ts`.
 */

import {
  canonical,
  parsePermission,
  type Permission,
} from 'src/common/permissions/permission-grammar';

/** The canonical form of a permission string (`test` → `global.test`). */
export function canonicalize(text: string): string {
  return canonical(parsePermission(text));
}

/** A permission list in canonical form, each permission once, in first-seen order. */
export function canonicalList(perms: readonly string[]): string[] {
  return [...new Set(perms.map(canonicalize))];
}

function isGlobalWildcard(permission: Permission): boolean {
  return !permission.negator && permission.namespace === 'global' && permission.perm === '*';
}

/** Whether `perms` grant `query` (its own `~` is ignored). */
export function hasPerm(perms: readonly string[], query: string): boolean {
  return grants(perms.map(parsePermission), parsePermission(query));
}

/** `hasPerm` on parsed permissions, so a list checked many times is parsed once. */
function grants(parsed: readonly Permission[], wanted: Permission): boolean {
  if (parsed.some(isGlobalWildcard)) return true;
  let granted = false;
  for (const entry of parsed) {
    const namespaceMatches = entry.namespace === wanted.namespace || entry.namespace === 'global';
    const permMatches = entry.perm === wanted.perm || entry.perm === '*';
    if (!namespaceMatches || !permMatches) continue;
    if (entry.negator) return false;
    granted = true;
  }
  return granted;
}

/**
 * The permissions granted by both lists, as one list: `hasPerm(result, p)` is
 * `hasPerm(a, p) && hasPerm(b, p)` for every `p`. Used to limit a member's permissions to an API
 * token's scope. Each pair of grants overlaps in its narrower namespace and perm; every negator
 * of either list is kept (`global.*` in a list outranks its negators, so that list is the other).
 */
export function intersectPermissions(a: readonly string[], b: readonly string[]): string[] {
  const left = a.map(parsePermission);
  const right = b.map(parsePermission);
  if (left.some(isGlobalWildcard)) return canonicalList(b);
  if (right.some(isGlobalWildcard)) return canonicalList(a);
  const overlaps: string[] = [];
  for (const x of left.filter((p) => !p.negator)) {
    for (const y of right.filter((p) => !p.negator)) {
      const overlap = overlapOf(x, y);
      if (overlap) overlaps.push(canonical(overlap));
    }
  }
  const negators = [...left, ...right].filter((p) => p.negator).map(canonical);
  return [...new Set([...overlaps, ...negators])];
}

/** What two grants both grant, as one grant; null when nothing. */
function overlapOf(x: Permission, y: Permission): Permission | null {
  const namespace =
    x.namespace === 'global'
      ? y.namespace
      : y.namespace === 'global' || y.namespace === x.namespace
        ? x.namespace
        : null;
  const perm = x.perm === '*' ? y.perm : y.perm === '*' || y.perm === x.perm ? x.perm : null;
  return namespace === null || perm === null ? null : { namespace, perm, negator: false };
}

export interface Position {
  id: string;
  /** A lower index ranks higher. */
  index: number;
  perms: readonly string[];
}

/**
 * A member's effective permissions from the entries of their roles and their own overrides (index
 * 0): applied from the highest index down, so the most senior position wins. Negators are kept.
 */
export function resolvePermissions(
  positions: readonly Position[],
  overrides: readonly string[],
): string[] {
  // Stable: equal indexes keep their order, and the overrides come after any real index-0 entry.
  const ordered = [...positions, { id: '@overrides', index: 0, perms: overrides }]
    .map((position, order) => ({ position, order }))
    .sort((a, b) => b.position.index - a.position.index || a.order - b.order)
    .map(({ position }) => position);
  const set = new PermissionSet();
  for (const position of ordered) {
    for (const text of position.perms) apply(set, parsePermission(text));
  }
  return set.keys();
}

function apply(set: PermissionSet, permission: Permission): void {
  if (permission.perm === '@clear') {
    if (permission.namespace === 'global') set.clear();
    else set.removeNamespace(permission.namespace, false);
    return;
  }
  const key = canonical(permission);
  const opposite = canonical({ ...permission, negator: !permission.negator });
  if (!permission.negator && permission.perm === '*') {
    set.removeNamespace(permission.namespace, true);
  }
  if (set.has(opposite)) {
    set.delete(opposite);
    set.add(key, permission);
  } else {
    set.add(key, permission);
  }
}

/**
 * Insertion-ordered canonical keys; adding a present key does not move it. Indexed by namespace
 * (and negators apart), so a wildcard or `@clear` touches only what it removes: every key is
 * removed at most once per add, and resolving stays linear in the number of strings.
 */
class PermissionSet {
  private readonly entries = new Map<string, Permission>();
  private readonly byNamespace = new Map<string, { all: Set<string>; negators: Set<string> }>();

  has(key: string): boolean {
    return this.entries.has(key);
  }
  add(key: string, permission: Permission): void {
    if (this.entries.has(key)) return;
    this.entries.set(key, permission);
    let index = this.byNamespace.get(permission.namespace);
    if (!index) {
      index = { all: new Set(), negators: new Set() };
      this.byNamespace.set(permission.namespace, index);
    }
    index.all.add(key);
    if (permission.negator) index.negators.add(key);
  }
  delete(key: string): void {
    const permission = this.entries.get(key);
    if (!permission) return;
    this.entries.delete(key);
    const index = this.byNamespace.get(permission.namespace);
    index?.all.delete(key);
    index?.negators.delete(key);
  }
  clear(): void {
    this.entries.clear();
    this.byNamespace.clear();
  }
  /** Removes the namespace's keys, or only its negators. */
  removeNamespace(namespace: string, negatorsOnly: boolean): void {
    const index = this.byNamespace.get(namespace);
    if (!index) return;
    for (const key of [...(negatorsOnly ? index.negators : index.all)]) this.delete(key);
  }
  keys(): string[] {
    return [...this.entries.keys()];
  }
}

export type PatchCheck =
  | { ok: true }
  | { ok: false; error: 'NoPermission'; permission: string }
  | { ok: false; error: 'LacksNegatorForWildcard'; wildcard: string; negator: string };

/**
 * Whether `manager` (the author's resolved permissions) may turn `current` into `next`: every
 * added or removed permission needs its base permission, and handing out or taking away `ns.*`
 * needs every negator of `ns` the manager has to be in `next`.
 */
export function checkPatchChanges(
  manager: readonly string[],
  current: readonly string[],
  next: readonly string[],
): PatchCheck {
  const currentKeys = new Set(current.map(canonicalize));
  const nextKeys = new Set(next.map(canonicalize));
  const changed = [
    ...current.filter((p) => !nextKeys.has(canonicalize(p))),
    ...next.filter((p) => !currentKeys.has(canonicalize(p))),
  ];
  const managerParsed = manager.map(parsePermission);
  const managerNegators = managerParsed.filter((p) => p.negator);
  for (const text of changed) {
    const change = parsePermission(text);
    const base = canonical({ ...change, negator: false });
    if (!grants(managerParsed, parsePermission(base))) {
      return { ok: false, error: 'NoPermission', permission: base };
    }
    if (change.perm !== '*') continue;
    for (const negator of managerNegators) {
      if (negator.namespace !== change.namespace) continue;
      if (!nextKeys.has(canonical(negator))) {
        return {
          ok: false,
          error: 'LacksNegatorForWildcard',
          wildcard: text,
          negator: canonical(negator),
        };
      }
    }
  }
  return { ok: true };
}

/** `ok`, `NoPermission:<perm>` or `LacksNegatorForWildcard:<wildcard>:<negator>`. */
export function describePatchCheck(check: PatchCheck): string {
  if (check.ok) return 'ok';
  return check.error === 'NoPermission'
    ? `NoPermission:${check.permission}`
    : `LacksNegatorForWildcard:${check.wildcard}:${check.negator}`;
}
