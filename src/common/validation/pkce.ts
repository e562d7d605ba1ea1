/** A PKCE code verifier or S256 challenge (RFC 7636 §4.1–4.2): 43 to 128 unreserved characters. */
export const PKCE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

export const PKCE_VERIFIER_MESSAGE = (field: string): string =>
  `${field} must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636)`;
