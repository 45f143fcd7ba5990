import { Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppConfig } from '../../src/config/app-config.js';

export interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  keyVersion: number;
}

export class SecretDecryptionError extends Error {}

/**
 * AES-256-GCM with the configured ENCRYPTION_KEY: a random 96-bit IV per value, a 128-bit tag,
 * and associated data that binds the ciphertext to its record (a value copied onto another
 * row does not decrypt).
 */
@Injectable()
export class SecretCipher {
  static readonly KEY_VERSION = 1;

  constructor(private readonly config: AppConfig) {}

  seal(plaintext: string, associatedData: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.config.keys.encryptionKey, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, iv, authTag: cipher.getAuthTag(), keyVersion: SecretCipher.KEY_VERSION };
  }

  open(sealed: Sealed, associatedData: string): string {
    if (sealed.keyVersion !== SecretCipher.KEY_VERSION) throw new SecretDecryptionError(`unknown key version ${sealed.keyVersion}`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.config.keys.encryptionKey, sealed.iv);
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(sealed.authTag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError('authentication failed: wrong key, or the stored value was altered');
    }
  }
}
