import { type Authorization, readAuthorization, tokenOf } from 'src/auth/authorization-header';

const TOKEN = `arl_${'a'.repeat(43)}`;

describe('readAuthorization', () => {
  it.each<[string, unknown, Authorization]>([
    ['no header', undefined, { kind: 'missing' }],
    ['an empty header', '', { kind: 'missing' }],
    ['a blank header', ' \t ', { kind: 'missing' }],
    ['a repeated header (an array)', [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`], { kind: 'missing' }],
    ['a number', 42, { kind: 'missing' }],
    ['a bare token (PublicAuth)', TOKEN, { kind: 'bare', token: TOKEN }],
    ['a bare token with spaces around', `  ${TOKEN} `, { kind: 'bare', token: TOKEN }],
    ['the scheme alone, read as a bare token', 'Bearer', { kind: 'bare', token: 'Bearer' }],
    ['Bearer x (UserAuth)', 'Bearer x', { kind: 'bearer', token: 'x' }],
    ['bearer x, the scheme in any case', 'bearer x', { kind: 'bearer', token: 'x' }],
    ['BEARER x', 'BEARER x', { kind: 'bearer', token: 'x' }],
    ['Bearer and a space, no token', 'Bearer ', { kind: 'malformed' }],
    ['Bearer  x, with two spaces', 'Bearer  x', { kind: 'malformed' }],
    ['Bearer x y', 'Bearer x y', { kind: 'malformed' }],
    ['Bearer x and a trailing space', 'Bearer x ', { kind: 'malformed' }],
    ['a tab after the scheme', 'Bearer\tx', { kind: 'malformed' }],
    ['two bearer tokens', 'Bearer x Bearer y', { kind: 'malformed' }],
    ['another scheme', 'Basic dXNlcjpwYXNzd29yZA==', { kind: 'malformed' }],
    ['a bare token with a space inside', 'arl_x arl_y', { kind: 'malformed' }],
  ])('%s', (_case, header, expected) => {
    expect(readAuthorization(header)).toEqual(expected);
  });
});

describe('tokenOf', () => {
  it.each<[Authorization, string | null]>([
    [{ kind: 'missing' }, null],
    [{ kind: 'malformed' }, null],
    [{ kind: 'bare', token: TOKEN }, TOKEN],
    [{ kind: 'bearer', token: TOKEN }, TOKEN],
  ])('%j names %j', (authorization, token) => {
    expect(tokenOf(authorization)).toBe(token);
  });
});
