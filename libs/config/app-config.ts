import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigurationError, Environment, loadEnvironment } from './environment.js';
import { requiredSsoDomains, ssoSettingsOf, type SsoSettings } from './sso-settings.js';

export interface KeyMaterial {
  jwtSecret: string;
  encryptionKey: Buffer;
  /** Earlier encryption keys (ENCRYPTION_KEY_PREVIOUS), for secrets not yet re-sealed. */
  previousEncryptionKeys: Buffer[];
  /** Signs expiring download URLs. */
  urlSigningKey: Buffer;
}

/** The typed configuration every module injects. Built once at boot from the environment. */
export class AppConfig {
  readonly env: Environment;
  readonly dataDir: string;
  readonly keys: KeyMaterial;
  /** Single sign-on, when SSO_ISSUER_URL and SSO_CLIENT_ID are set. */
  readonly sso?: SsoSettings;
  /** E-mail domains whose users may not log in with a password (SSO_REQUIRED_DOMAINS). */
  readonly ssoRequiredDomains: ReadonlySet<string>;

  constructor(env: Environment, keys: KeyMaterial) {
    this.env = env;
    this.sso = ssoSettingsOf(env);
    this.ssoRequiredDomains = requiredSsoDomains(env);
    this.dataDir = resolve(env.DATA_DIR);
    this.keys = keys;
  }

  get embedded(): boolean {
    return !this.env.DATABASE_URL;
  }

  get queueDriver(): 'bullmq' | 'in-process' {
    return this.env.REDIS_URL ? 'bullmq' : 'in-process';
  }

  static fromEnvironment(source: NodeJS.ProcessEnv = process.env): AppConfig {
    const env = loadEnvironment(source);
    return new AppConfig(env, resolveKeys(env));
  }
}

interface StoredKeys {
  jwt_secret: string;
  encryption_key: string;
  url_signing_key: string;
}

/**
 * Keys come from configuration; the ones not configured are generated once and kept in
 * DATA_DIR/keys.json (mode 0600) so tokens and ciphertexts survive a restart.
 */
export function resolveKeys(env: Environment): KeyMaterial {
  const needsFile = !env.JWT_SECRET || !env.ENCRYPTION_KEY;
  let stored: StoredKeys | undefined;
  const dataDir = resolve(env.DATA_DIR);
  const file = join(dataDir, 'keys.json');
  if (existsSync(file)) {
    try {
      stored = JSON.parse(readFileSync(file, 'utf8')) as StoredKeys;
    } catch (err) {
      throw new ConfigurationError(`DATA_DIR: ${file} is not valid JSON (${(err as Error).message})`);
    }
  } else {
    stored = {
      jwt_secret: randomBytes(48).toString('base64url'),
      encryption_key: randomBytes(32).toString('base64'),
      url_signing_key: randomBytes(32).toString('base64'),
    };
    if (needsFile) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
      chmodSync(file, 0o600);
    }
  }
  return {
    jwtSecret: env.JWT_SECRET ?? stored.jwt_secret,
    encryptionKey: Buffer.from(env.ENCRYPTION_KEY ?? stored.encryption_key, 'base64'),
    previousEncryptionKeys: (env.ENCRYPTION_KEY_PREVIOUS ?? '')
      .split(',')
      .filter(Boolean)
      .map((k) => Buffer.from(k, 'base64')),
    // Derived, so a configured JWT_SECRET is never used as-is for a second purpose.
    urlSigningKey: env.JWT_SECRET
      ? createHmac('sha256', env.JWT_SECRET).update('url-signing').digest()
      : Buffer.from(stored.url_signing_key, 'base64'),
  };
}
