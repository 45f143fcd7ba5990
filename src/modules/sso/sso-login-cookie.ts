import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { LoginChecks } from './oidc-relying-party.service.js';

/** What a login in progress keeps in the browser until its callback, sealed. */
export interface PendingLogin extends LoginChecks {
  /** Where the browser goes with its token afterwards (an allowed origin), if anywhere. */
  returnTo?: string;
}

export const SSO_LOGIN_COOKIE = 'ews_sso_login';
/** A login must come back within this many seconds. */
export const SSO_LOGIN_SECONDS = 600;
const PURPOSE = 'ews-sso-login-v1';

/**
 * Seals a login's state, nonce and PKCE verifier into its cookie (AES-256-GCM under a key derived
 * from JWT_SECRET, the expiry inside the sealed text): the browser carries it but can neither read
 * nor alter it, and no server-side row waits for logins that are never finished.
 */
export class SsoLoginCookie {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update(PURPOSE).digest();
  }

  seal(login: PendingLogin, now = Date.now()): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(PURPOSE));
    const plain = JSON.stringify({ ...login, exp: now + SSO_LOGIN_SECONDS * 1000 });
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The login the cookie holds; undefined when it is absent, altered, or expired. */
  open(cookie: string | undefined, now = Date.now()): PendingLogin | undefined {
    if (!cookie || cookie.length > 4096) return undefined;
    const raw = Buffer.from(cookie, 'base64url');
    if (raw.length < 29) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(PURPOSE));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const { exp, ...login } = JSON.parse(plain) as PendingLogin & { exp: number };
      return exp > now ? login : undefined;
    } catch {
      return undefined;
    }
  }
}
