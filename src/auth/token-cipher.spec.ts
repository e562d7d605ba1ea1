import { randomBytes } from 'node:crypto';
import { TokenCipher } from 'src/auth/token-cipher';
import { loadConfig } from 'src/config/app-config';

const cipherWith = (key: Buffer): TokenCipher =>
  new TokenCipher(
    loadConfig({ DATABASE_URL: 'memory://', TOKEN_ENCRYPTION_KEY: key.toString('base64') }),
  );

describe('TokenCipher', () => {
  const key = randomBytes(32);
  const cipher = cipherWith(key);

  it('round-trips a value under its context', () => {
    const blob = cipher.encrypt('access-token-value', 'user:1:access');
    expect(cipher.decrypt(blob, 'user:1:access')).toBe('access-token-value');
  });

  it('never stores the plaintext and uses a fresh IV each time', () => {
    const a = cipher.encrypt('same', 'ctx');
    const b = cipher.encrypt('same', 'ctx');
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('same'))).toBe(false);
    expect(a[0]).toBe(1);
    expect(a.length).toBe(1 + 12 + 16 + 4);
  });

  it.each([
    ['another context', (blob: Buffer) => cipher.decrypt(blob, 'user:2:access')],
    ['another key', (blob: Buffer) => cipherWith(randomBytes(32)).decrypt(blob, 'user:1:access')],
    [
      'an altered ciphertext',
      (blob: Buffer) => {
        const altered = Buffer.from(blob);
        altered[altered.length - 1] ^= 1;
        return cipher.decrypt(altered, 'user:1:access');
      },
    ],
    ['a truncated value', (blob: Buffer) => cipher.decrypt(blob.subarray(0, 20), 'user:1:access')],
    [
      'an unknown version',
      (blob: Buffer) =>
        cipher.decrypt(Buffer.concat([Buffer.from([9]), blob.subarray(1)]), 'user:1:access'),
    ],
  ])('refuses to decrypt with %s', (_label, attempt) => {
    const blob = cipher.encrypt('secret', 'user:1:access');
    expect(() => attempt(blob)).toThrow();
  });
});
