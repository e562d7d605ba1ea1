import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from 'src/config/app-config';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts platform OAuth2 tokens at rest: AES-256-GCM under TOKEN_ENCRYPTION_KEY, a random IV per
 * value, and a context (user id and field) as associated data so that a ciphertext copied to
 * another row or column does not decrypt. Layout: version (1) | IV (12) | tag (16) | ciphertext.
 */
@Injectable()
export class TokenCipher {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = config.tokenEncryptionKey;
  }

  encrypt(plaintext: string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Throws when the value was not encrypted under this key and context, or was altered. */
  decrypt(blob: Buffer, context: string): string {
    if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== VERSION) {
      throw new Error('Not an encrypted token of a known version');
    }
    const iv = blob.subarray(1, 1 + IV_BYTES);
    const tag = blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    const ciphertext = blob.subarray(1 + IV_BYTES + TAG_BYTES);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  }
}
