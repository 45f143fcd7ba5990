import { createHash, randomBytes } from 'node:crypto';

/** A random bearer secret (invitation, reset token) shown once; only its hash is stored. */
export function newSecretToken(prefix: string): { token: string; hash: string } {
  const token = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashSecretToken(token) };
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
