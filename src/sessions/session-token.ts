import { hash, randomBytes } from 'node:crypto';
import type { SessionType } from 'src/sessions/session.entity';

const PREFIX: Readonly<Record<SessionType, string>> = { login: 'arl_', api: 'ara_' };
const RANDOM_BYTES = 32;
/** The prefix and 32 random bytes in base64url (43 characters). */
const WELL_FORMED = /^ar[la]_[A-Za-z0-9_-]{43}$/;

/** A new opaque token: shown once to its owner, stored only as its hash. */
export function generateSessionToken(type: SessionType): string {
  return PREFIX[type] + randomBytes(RANDOM_BYTES).toString('base64url');
}

/**
 * SHA-256 of the token. Tokens carry 256 random bits, so an unsalted fast hash is enough: nothing
 * can be guessed from it, and lookups by hash do not compare secrets byte by byte.
 */
export function hashSessionToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** The same hash in hex, the key of the token's cached session: hashing to hex directly costs a third of hashing to a Buffer and converting it. */
export function sessionTokenKey(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Whether the string can be a token at all; anything else is refused without a lookup. */
export function isWellFormedToken(token: string): boolean {
  return WELL_FORMED.test(token);
}
