import { describe, expect, it } from '@jest/globals';
import { getMetadataStorage } from 'class-validator';
import express from 'express';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppConfig, resolveKeys } from './app-config.js';
import { ConfigurationError, Environment, loadEnvironment } from './environment.js';
import { trustProxySetting } from './trusted-proxies.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every variable the Environment class validates, optional ones without a default included. */
function allVariables(): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(Environment, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

function failure(env: Record<string, string>): string {
  try {
    loadEnvironment(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigurationError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ews-config-'));
}

describe('environment', () => {
  it('has working defaults for everything: nothing to prepare', () => {
    const env = loadEnvironment({});
    expect(env).toEqual(
      expect.objectContaining({
        PORT: 3000,
        HOST: '0.0.0.0',
        DATA_DIR: './data',
        DATABASE_POOL_SIZE: 10,
        ADMIN_EMAIL: 'admin@example.com',
        TOKEN_TTL_SECONDS: 3600,
        LOGIN_MAX_FAILURES: 5,
        LOGIN_LOCKOUT_SECONDS: 900,
        INVITATION_TTL_HOURS: 168,
        RESET_TOKEN_TTL_MINUTES: 60,
        BODY_LIMIT: '1mb',
        RUN_WORKERS: true,
        QUEUE_CONCURRENCY: 2,
        JOB_LEASE_SECONDS: 30,
        JOB_MAX_ATTEMPTS: 3,
        LOG_LEVEL: 'info',
      }),
    );
    for (const unset of [
      'DATABASE_URL',
      'REDIS_URL',
      'ADMIN_PASSWORD',
      'JWT_SECRET',
      'ENCRYPTION_KEY',
      'PUBLIC_BASE_URL',
    ] as const) {
      expect(env[unset]).toBeUndefined();
    }
  });

  it('converts numbers and booleans, and treats an empty value as unset', () => {
    const env = loadEnvironment({
      PORT: '8080',
      RUN_WORKERS: 'false',
      QUEUE_CONCURRENCY: ' 4 ',
      DATABASE_URL: '',
      LOG_LEVEL: 'debug',
    });
    expect(env.PORT).toBe(8080);
    expect(env.RUN_WORKERS).toBe(false);
    expect(env.QUEUE_CONCURRENCY).toBe(4);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(loadEnvironment({ RUN_WORKERS: 'yes' }).RUN_WORKERS).toBe(true);
    expect(loadEnvironment({ RUN_WORKERS: '0' }).RUN_WORKERS).toBe(false);
  });

  it('accepts well-formed connection URLs and keys', () => {
    const env = loadEnvironment({
      DATABASE_URL: 'postgresql://ews:pw@db.internal:5432/ews',
      REDIS_URL: 'rediss://cache.internal:6380',
      JWT_SECRET: 'x'.repeat(32),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PUBLIC_BASE_URL: 'https://eval.example.com',
    });
    expect(env.DATABASE_URL).toBe('postgresql://ews:pw@db.internal:5432/ews');
  });

  it('stops boot with one message naming every bad variable, and only those', () => {
    const message = failure({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://db/ews',
      REDIS_URL: 'http://cache:6379',
      ADMIN_EMAIL: 'not-an-email',
      ADMIN_PASSWORD: 'short',
      JWT_SECRET: 'too-short',
      ENCRYPTION_KEY: 'abc',
      BODY_LIMIT: '10 gigabytes',
      RUN_WORKERS: 'maybe',
      LOG_LEVEL: 'loud',
      PUBLIC_BASE_URL: 'eval.example.com',
      DATABASE_POOL_SIZE: '500',
      HOST: '127.0.0.1',
    });
    expect(message).toMatch(/^Invalid configuration:/);
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'REDIS_URL',
      'ADMIN_EMAIL',
      'ADMIN_PASSWORD',
      'JWT_SECRET',
      'ENCRYPTION_KEY',
      'BODY_LIMIT',
      'RUN_WORKERS',
      'LOG_LEVEL',
      'PUBLIC_BASE_URL',
      'DATABASE_POOL_SIZE',
    ]) {
      expect(message).toMatch(new RegExp(`^  ${name}: `, 'm'));
    }
    expect(message).not.toMatch(/^ {2}HOST:/m);
    expect(message).toContain('DATABASE_URL must be a postgres:// or postgresql:// URL');
    expect(message).toContain('ENCRYPTION_KEY must be 32 bytes, base64 encoded');
  });

  it('refuses out-of-range numbers', () => {
    expect(failure({ PORT: '70000' })).toMatch(/^ {2}PORT: /m);
    expect(failure({ TOKEN_TTL_SECONDS: '10' })).toMatch(/^ {2}TOKEN_TTL_SECONDS: /m);
    expect(failure({ QUEUE_CONCURRENCY: '0' })).toMatch(/^ {2}QUEUE_CONCURRENCY: /m);
    expect(failure({ JOB_LEASE_SECONDS: '1.5' })).toMatch(/^ {2}JOB_LEASE_SECONDS: /m);
  });

  it('takes EMBEDDED_SHARED_BUFFERS in whole MB or GB only', () => {
    for (const bad of ['32', '32mb', '0MB', '1.5GB', '32MB; fsync=on', '-c fsync=on'])
      expect(failure({ EMBEDDED_SHARED_BUFFERS: bad })).toMatch(/^ {2}EMBEDDED_SHARED_BUFFERS: .*whole MB or GB/m);
    expect(loadEnvironment({ EMBEDDED_SHARED_BUFFERS: '64MB' }).EMBEDDED_SHARED_BUFFERS).toBe('64MB');
    expect(loadEnvironment({}).EMBEDDED_SHARED_BUFFERS).toBeUndefined();
  });

  it('takes TRUSTED_PROXIES as addresses, CIDR ranges or range names, each one express accepts', () => {
    for (const value of [
      'loopback',
      '10.0.0.0/8, 192.168.1.7,fd00::/8 , ::1',
      'linklocal,uniquelocal,172.16.0.0/12',
      '::ffff:10.0.0.1',
      '2001:db8::/32',
    ]) {
      const env = loadEnvironment({ TRUSTED_PROXIES: value });
      expect(() => express().set('trust proxy', trustProxySetting(env.TRUSTED_PROXIES))).not.toThrow();
    }
    expect(trustProxySetting(loadEnvironment({}).TRUSTED_PROXIES)).toBe(false);
    for (const value of [
      '10.0.0.300',
      '10.0.0.0/33',
      'fd00::/129',
      'everything',
      'true',
      '2',
      '10.0.0.1,,10.0.0.2',
      'fe80::1%eth0',
      '10.0.0.0/8/8',
      '0.0.0.0/0',
      '::/0',
    ]) {
      expect([value, failure({ TRUSTED_PROXIES: value })]).toEqual([
        value,
        expect.stringMatching(/^ {2}TRUSTED_PROXIES: TRUSTED_PROXIES /m),
      ]);
    }
  });

  it('bounds password hashing: at least 2 at once by default, and a queue of twice that unless set', () => {
    const env = loadEnvironment({});
    expect(env.PASSWORD_HASH_CONCURRENCY).toBeGreaterThanOrEqual(2);
    expect(env.PASSWORD_HASH_QUEUE).toBeUndefined();
    expect(loadEnvironment({ PASSWORD_HASH_CONCURRENCY: '3', PASSWORD_HASH_QUEUE: '0' })).toEqual(
      expect.objectContaining({ PASSWORD_HASH_CONCURRENCY: 3, PASSWORD_HASH_QUEUE: 0 }),
    );
    expect(failure({ PASSWORD_HASH_CONCURRENCY: '0' })).toMatch(/^ {2}PASSWORD_HASH_CONCURRENCY: /m);
    expect(failure({ PASSWORD_HASH_QUEUE: '-1' })).toMatch(/^ {2}PASSWORD_HASH_QUEUE: /m);
  });

  it('reads every variable it validates (none is silently ignored)', () => {
    for (const name of allVariables()) {
      let env: Environment | undefined;
      try {
        env = loadEnvironment({ [name]: '!' });
      } catch (err) {
        expect((err as Error).message).toMatch(new RegExp(`^  ${name}: `, 'm'));
        continue;
      }
      expect([name, env[name as keyof Environment]]).toEqual([name, '!']);
    }
  });

  it('is documented variable by variable in docs/configuration.md', () => {
    const doc = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    const undocumented = allVariables().filter((name) => !new RegExp(`^\\| \`${name}\` \\|`, 'm').test(doc));
    expect(undocumented).toEqual([]);
  });
});

describe('keys (resolveKeys)', () => {
  it('generates keys.json once in DATA_DIR (mode 0600, directory created) and reuses it', () => {
    const dir = join(tempDir(), 'nested', 'data');
    try {
      const first = resolveKeys(loadEnvironment({ DATA_DIR: dir }));
      const file = join(dir, 'keys.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const content = readFileSync(file, 'utf8');
      expect(first.encryptionKey).toHaveLength(32);
      expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);

      const second = resolveKeys(loadEnvironment({ DATA_DIR: dir }));
      expect(second.jwtSecret).toBe(first.jwtSecret);
      expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
      expect(second.urlSigningKey.equals(first.urlSigningKey)).toBe(true);
      expect(readFileSync(file, 'utf8')).toBe(content);
    } finally {
      rmSync(dirname(dirname(dir)), { recursive: true, force: true });
    }
  });

  it('writes no file when both keys are configured, and uses them', () => {
    const dir = tempDir();
    try {
      const encryptionKey = randomBytes(32);
      const keys = resolveKeys(
        loadEnvironment({
          DATA_DIR: dir,
          JWT_SECRET: 's'.repeat(40),
          ENCRYPTION_KEY: encryptionKey.toString('base64'),
        }),
      );
      expect(keys.jwtSecret).toBe('s'.repeat(40));
      expect(keys.encryptionKey.equals(encryptionKey)).toBe(true);
      expect(existsSync(join(dir, 'keys.json'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a configured key over the stored one, and generates only what is missing', () => {
    const dir = tempDir();
    try {
      const generated = resolveKeys(loadEnvironment({ DATA_DIR: dir }));
      const keys = resolveKeys(loadEnvironment({ DATA_DIR: dir, JWT_SECRET: 'j'.repeat(32) }));
      expect(keys.jwtSecret).toBe('j'.repeat(32));
      expect(keys.encryptionKey.equals(generated.encryptionKey)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops boot naming DATA_DIR when keys.json is corrupt', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'keys.json'), '{not json');
      expect(() => resolveKeys(loadEnvironment({ DATA_DIR: dir }))).toThrow(ConfigurationError);
      expect(() => resolveKeys(loadEnvironment({ DATA_DIR: dir }))).toThrow(
        /^DATA_DIR: .*keys\.json is not valid JSON/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('AppConfig.fromEnvironment picks the embedded database and in-process queue unless URLs are set', () => {
    const dir = tempDir();
    try {
      const embedded = AppConfig.fromEnvironment({ DATA_DIR: dir });
      expect([embedded.embedded, embedded.queueDriver]).toEqual([true, 'in-process']);
      expect(embedded.dataDir).toBe(dir);
      const scaled = AppConfig.fromEnvironment({
        DATA_DIR: dir,
        DATABASE_URL: 'postgres://db/ews',
        REDIS_URL: 'redis://cache:6379',
      });
      expect([scaled.embedded, scaled.queueDriver]).toEqual([false, 'bullmq']);
      expect(() => AppConfig.fromEnvironment({ DATA_DIR: dir, PORT: 'x' })).toThrow(/PORT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
