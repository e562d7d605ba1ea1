/**
 * The bot's permission strings (kittycat-rules.md §1–4): `namespace.perm`, `~` to negate, `*` for
 * every perm of a namespace, `global` for every namespace, `@clear` to reset while resolving. Pure
 * functions; permissions are compared by their canonical form everywhere.
 */

export interface Permission {
  namespace: string;
  perm: string;
  negator: boolean;
}

/** The first run of non-dots followed by a dot and at least one more character (not anchored). */
const NAMESPACED = /([^.]+)\.(.+)$/s;

export function parsePermission(text: string): Permission {
  const negator = text.startsWith('~');
  const rest = negator ? text.slice(1) : text;
  const match = firstNamespaced(rest);
  return match
    ? { namespace: match.namespace, perm: match.perm, negator }
    : { namespace: 'global', perm: rest, negator };
}

/** Luau's `string.match(s, "([^%.]+)%.(.+)")`: the leftmost run of non-dots directly followed by a dot and more. */
function firstNamespaced(text: string): { namespace: string; perm: string } | null {
  for (let start = 0; start < text.length; start++) {
    if (text[start] === '.') continue;
    const match = NAMESPACED.exec(text.slice(start));
    if (match && match.index === 0) return { namespace: match[1], perm: match[2] };
  }
  return null;
}

export function canonical(permission: Permission): string {
  return `${permission.negator ? '~' : ''}${permission.namespace}.${permission.perm}`;
}

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
  const parsed = perms.map(parsePermission);
  if (parsed.some(isGlobalWildcard)) return true;
  const wanted = parsePermission(query);
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
  const set = new OrderedSet();
  for (const position of ordered) {
    for (const text of position.perms) apply(set, parsePermission(text));
  }
  return set.keys();
}

function apply(set: OrderedSet, permission: Permission): void {
  if (permission.perm === '@clear') {
    if (permission.namespace === 'global') set.clear();
    else set.removeWhere((p) => p.namespace === permission.namespace);
    return;
  }
  const key = canonical(permission);
  const opposite = canonical({ ...permission, negator: !permission.negator });
  if (!permission.negator && permission.perm === '*') {
    set.removeWhere((p) => p.negator && p.namespace === permission.namespace);
  }
  if (set.has(opposite)) {
    set.delete(opposite);
    set.add(key);
  } else {
    set.add(key);
  }
}

/** Insertion-ordered canonical keys; adding a present key does not move it. */
class OrderedSet {
  private readonly entries = new Set<string>();

  has(key: string): boolean {
    return this.entries.has(key);
  }
  add(key: string): void {
    this.entries.add(key);
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
  clear(): void {
    this.entries.clear();
  }
  removeWhere(matches: (permission: Permission) => boolean): void {
    for (const key of [...this.entries]) {
      if (matches(parsePermission(key))) this.entries.delete(key);
    }
  }
  keys(): string[] {
    return [...this.entries];
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
  const managerNegators = manager.map(parsePermission).filter((p) => p.negator);
  for (const text of changed) {
    const change = parsePermission(text);
    const base = canonical({ ...change, negator: false });
    if (!hasPerm(manager, base)) return { ok: false, error: 'NoPermission', permission: base };
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
