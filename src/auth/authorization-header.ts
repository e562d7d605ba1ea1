/**
 * What a request's `Authorization` header holds. UserAuth sends `Bearer <token>`; PublicAuth
 * sends the bare token. Anything else names no token and is malformed.
 */
export type Authorization =
  | { kind: 'missing' }
  | { kind: 'malformed' }
  | { kind: 'bare'; token: string }
  | { kind: 'bearer'; token: string };

const BEARER_SCHEME = /^Bearer\s/i;

/**
 * Reads the header, the one place it is parsed. A header that starts with the scheme must be
 * exactly `Bearer <token>` with one space (as passport-http-bearer splits it); one that does not is
 * a bare token, which has no space. No header, a blank one or a repeated one is missing.
 */
export function readAuthorization(header: unknown): Authorization {
  if (typeof header !== 'string' || header.trim() === '') return { kind: 'missing' };
  if (BEARER_SCHEME.test(header)) {
    const parts = header.split(' ');
    return parts.length === 2 && parts[1] !== '' && /^Bearer$/i.test(parts[0])
      ? { kind: 'bearer', token: parts[1] }
      : { kind: 'malformed' };
  }
  const token = header.trim();
  return token.includes(' ') ? { kind: 'malformed' } : { kind: 'bare', token };
}

/** The token the header names, in either form; null when it names none. */
export function tokenOf(authorization: Authorization): string | null {
  return authorization.kind === 'bare' || authorization.kind === 'bearer'
    ? authorization.token
    : null;
}
