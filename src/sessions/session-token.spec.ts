import {
  generateSessionToken,
  hashSessionToken,
  sessionTokenKey,
  isWellFormedToken,
} from 'src/sessions/session-token';

describe('session tokens', () => {
  it.each([
    ['login', 'arl_'],
    ['api', 'ara_'],
  ] as const)('a %s token has its prefix and 32 random bytes', (type, prefix) => {
    const token = generateSessionToken(type);
    expect(token.startsWith(prefix)).toBe(true);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    expect(isWellFormedToken(token)).toBe(true);
  });

  it('never repeats', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => generateSessionToken('api')));
    expect(tokens.size).toBe(1000);
  });

  it('hashes with SHA-256', () => {
    const sha256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(hashSessionToken('abc').toString('hex')).toBe(sha256);
    // The cache key is the same hash, in hex.
    expect(sessionTokenKey('abc')).toBe(sha256);
  });

  it.each([
    '',
    'arl_',
    'arx_' + 'a'.repeat(43),
    'arl_' + 'a'.repeat(42),
    'arl_' + 'a'.repeat(44),
    'arl_' + 'a'.repeat(42) + '=',
    'Bearer arl_' + 'a'.repeat(43),
    'arl_' + 'a'.repeat(42) + ' ',
    "arl_' OR 1=1 --" + 'a'.repeat(28),
  ])('refuses %p as malformed', (token) => {
    expect(isWellFormedToken(token)).toBe(false);
  });
});
