import { Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppConfig } from '#libs/config/app-config.js';

export interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  /** Fingerprint of the key that sealed it; '' for rows sealed before key ids existed (current key). */
  keyId: string;
}

export class SecretDecryptionError extends Error {}

/** A key's public name: the first 16 hex digits of its SHA-256 (reveals nothing of the key). */
export function keyIdOf(key: Buffer): string {
  return `k_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/**
 * AES-256-GCM under ENCRYPTION_KEY: a random 96-bit IV per value, a 128-bit tag, and associated
 * data binding the ciphertext to its record (a value copied onto another row does not decrypt).
 * Each ciphertext names its key, so ENCRYPTION_KEY_PREVIOUS keys keep opening old rows until
 * the rotation command re-seals them under the current key.
 */
@Injectable()
export class SecretCipher {
  private readonly current: { id: string; key: Buffer };
  private readonly keys = new Map<string, Buffer>();

  constructor(config: AppConfig) {
    this.current = { id: keyIdOf(config.keys.encryptionKey), key: config.keys.encryptionKey };
    for (const key of config.keys.previousEncryptionKeys) this.keys.set(keyIdOf(key), key);
    this.keys.set(this.current.id, this.current.key);
    this.keys.set('', this.current.key);
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, associatedData: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, iv, authTag: cipher.getAuthTag(), keyId: this.current.id };
  }

  open(sealed: Sealed, associatedData: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key)
      throw new SecretDecryptionError(
        `sealed with key ${sealed.keyId}, which is neither ENCRYPTION_KEY nor in ENCRYPTION_KEY_PREVIOUS`,
      );
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(sealed.authTag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError('authentication failed: wrong key, or the stored value was altered');
    }
  }
}
