import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

/** Password length limits for every place that sets one. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/** argon2id with the library's defaults (m=64 MiB, t=3, p=4), per OWASP's recommendation. */
@Injectable()
export class PasswordHasher {
  /** A hash that never verifies, compared against when the user does not exist (equal timing). */
  private dummy?: Promise<string>;

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id });
  }

  async verify(hash: string | null | undefined, password: string): Promise<boolean> {
    const target = hash ?? (await (this.dummy ??= argon2.hash('not-a-real-password', { type: argon2.argon2id })));
    try {
      return (await argon2.verify(target, password)) && !!hash;
    } catch {
      return false;
    }
  }
}
