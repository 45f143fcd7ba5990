import type { DynamicModule, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import supertest from 'supertest';
import { DataSource } from 'typeorm';
import { createRootLogger } from '../../libs/common/logger.js';
import { createApp } from '../../src/bootstrap.js';
import { AppConfig } from '../../src/config/app-config.js';
import { Factory } from '../factories/factory.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  dataSource: DataSource;
  db: TestDatabase;
  /** supertest bound to the app's HTTP server */
  http: ReturnType<typeof supertest>;
  factory: Factory;
  close(): Promise<void>;
}

export const ADMIN_EMAIL = 'admin@test.local';
export const ADMIN_PASSWORD = 'admin-password-1';

export interface TestAppOptions {
  /** Extra modules (e.g. test-only job handlers) loaded next to the application's families. */
  modules?: Array<Type | DynamicModule>;
  /** Where the app's JSON log lines go (e.g. a pino logger writing to an array). */
  logger?: Logger;
  /** Run on this database instead of a fresh one; close() then leaves it in place. */
  database?: TestDatabase;
}

/** The configuration every test process (API or worker) gets for a test database. */
export function testEnvironment(databaseUrl: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  };
}

/**
 * The real application, as `npm start` builds it, on this test file's own PostgreSQL
 * database. `env` overrides configuration (e.g. REDIS_URL, LOGIN_MAX_FAILURES).
 */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.database ?? (await createTestDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-test-'));
  const config = AppConfig.fromEnvironment({ ...testEnvironment(db.url), DATA_DIR: dataDir, ...env });
  const { app } = await createApp(config, options.logger ?? createRootLogger(config.env.LOG_LEVEL), { modules: options.modules });
  const http = supertest(app.getHttpServer());
  const dataSource = app.get(DataSource);
  return {
    app,
    config,
    dataSource,
    db,
    http,
    factory: new Factory(http, dataSource),
    close: async () => {
      await app.close();
      if (!options.database) await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
