import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AppConfig } from '#libs/config/app-config.js';
import { keyIdOf, SecretCipher, SecretDecryptionError } from './secret-cipher.js';

const config = (key = randomBytes(32).toString('base64'), previous?: string) =>
  AppConfig.fromEnvironment({
    DATABASE_URL: 'postgres://x/y',
    JWT_SECRET: 'j'.repeat(40),
    ENCRYPTION_KEY: key,
    ...(previous ? { ENCRYPTION_KEY_PREVIOUS: previous } : {}),
    DATA_DIR: '/tmp/ews-cipher-spec',
  });

describe('SecretCipher', () => {
  const cipher = new SecretCipher(config());

  it('round-trips, with a fresh IV each time and no plaintext in the ciphertext', () => {
    const a = cipher.seal('sk-live-abcdef', 'ws:1');
    const b = cipher.seal('sk-live-abcdef', 'ws:1');
    expect(a.iv).toHaveLength(12);
    expect(a.authTag).toHaveLength(16);
    expect(a.iv.equals(b.iv)).toBe(false);
    expect(a.ciphertext.toString('utf8')).not.toContain('sk-live');
    expect(cipher.open(a, 'ws:1')).toBe('sk-live-abcdef');
  });

  it('refuses altered ciphertext, a wrong tag, other associated data or another key', () => {
    const sealed = cipher.seal('value', 'ws:1/secret:1');
    const flipped = Buffer.from(sealed.ciphertext);
    flipped[0] ^= 1;
    expect(() => cipher.open({ ...sealed, ciphertext: flipped }, 'ws:1/secret:1')).toThrow(SecretDecryptionError);
    expect(() => cipher.open({ ...sealed, authTag: randomBytes(16) }, 'ws:1/secret:1')).toThrow(SecretDecryptionError);
    expect(() => cipher.open(sealed, 'ws:2/secret:1')).toThrow(SecretDecryptionError);
    expect(() => new SecretCipher(config()).open(sealed, 'ws:1/secret:1')).toThrow(SecretDecryptionError);
    expect(() => cipher.open({ ...sealed, keyId: 'k_0000000000000000' }, 'ws:1/secret:1')).toThrow(
      SecretDecryptionError,
    );
  });

  it('handles unicode and 64 KiB values', () => {
    const big = 'ключ-🔑-'.repeat(4000);
    expect(cipher.open(cipher.seal(big, 'x'), 'x')).toBe(big);
  });

  it('names the key that sealed each value and opens values sealed with a previous key', () => {
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    const before = new SecretCipher(config(oldKey));
    const sealed = before.seal('rotate me', 'aad');
    expect(sealed.keyId).toBe(keyIdOf(Buffer.from(oldKey, 'base64')));
    expect(sealed.keyId).toMatch(/^k_[0-9a-f]{16}$/);
    const after = new SecretCipher(config(newKey, oldKey));
    expect(after.currentKeyId).not.toBe(sealed.keyId);
    expect(after.open(sealed, 'aad')).toBe('rotate me');
    expect(after.seal('x', 'aad').keyId).toBe(after.currentKeyId);
    expect(() => new SecretCipher(config(newKey)).open(sealed, 'aad')).toThrow(/neither ENCRYPTION_KEY nor/);
  });
});
