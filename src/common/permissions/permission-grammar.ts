/**
 * The grammar of one permission string (kittycat-rules.md §1): `namespace.perm`, `~` to negate, a
 * string without a namespace in `global`. Pure functions of strings: what the strings grant is the
 * permission model's (`src/permissions/permission-string.ts`); the settings engine reads a string's
 * namespace to check the permissions of its own settings.
 */

export interface Permission {
  namespace: string;
  perm: string;
  negator: boolean;
}

export function parsePermission(text: string): Permission {
  const negator = text.startsWith('~');
  const rest = negator ? text.slice(1) : text;
  const match = firstNamespaced(rest);
  return match
    ? { namespace: match.namespace, perm: match.perm, negator }
    : { namespace: 'global', perm: rest, negator };
}

/**
 * Luau's `string.match(s, "([^%.]+)%.(.+)")`, in one pass. The leftmost candidate start is the
 * first non-dot; `[^%.]+` cannot cross a dot, so the only dot it can be followed by is the first
 * dot after that start, and it matches iff a character follows that dot. If it fails, every later
 * start fails too (it reaches the same dot, or starts past the last one).
 */
function firstNamespaced(text: string): { namespace: string; perm: string } | null {
  let start = 0;
  while (start < text.length && text[start] === '.') start++;
  if (start === text.length) return null;
  const dot = text.indexOf('.', start);
  if (dot === -1 || dot === text.length - 1) return null;
  return { namespace: text.slice(start, dot), perm: text.slice(dot + 1) };
}

export function canonical(permission: Permission): string {
  return `${permission.negator ? '~' : ''}${permission.namespace}.${permission.perm}`;
}
