import { AccessCache } from '#libs/auth/access-cache.js';
import type { DynamicModule, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import supertest from 'supertest';
import { DataSource } from 'typeorm';
import { createRootLogger } from '#libs/common/logger.js';
import { createApp } from '#src/bootstrap.js';
import { AppConfig } from '#libs/config/app-config.js';
import { Environment } from '#libs/config/environment.js';
import { Factory } from '../factories/factory.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { watchPool } from './embedded-watchdog.js';
import type { ResponseContract } from './response-contract.js';
import { responseCheckEnabled } from './response-violations.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  dataSource: DataSource;
  db: TestDatabase;
  /** supertest bound to the app's HTTP server */
  http: ReturnType<typeof supertest>;
  factory: Factory;
  /** Stops the app (bounded, see CLOSE_BOUND_MS) and drops its database unless it was given one. */
  close(withinMs?: number): Promise<void>;
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

/**
 * Password hashing at the service's own default cost (argon2id, 64 MiB, 3 passes, 4 lanes). Test
 * processes hash at argon2's cheapest settings (1 MiB, 1 pass: the same code, ~1 ms instead of
 * ~0.6 s a hash on the 2-core machine); the files about hashing under load pass this to measure
 * what a deployment meets.
 */
const serviceDefaults = new Environment();
export const DEFAULT_PASSWORD_HASHING = {
  PASSWORD_HASH_MEMORY_KIB: String(serviceDefaults.PASSWORD_HASH_MEMORY_KIB),
  PASSWORD_HASH_TIME_COST: String(serviceDefaults.PASSWORD_HASH_TIME_COST),
  PASSWORD_HASH_PARALLELISM: String(serviceDefaults.PASSWORD_HASH_PARALLELISM),
};

const GENEROUS_RATE_LIMITS = {
  RATE_LIMIT_READ: '100000000',
  RATE_LIMIT_WRITE: '100000000',
  RATE_LIMIT_INGESTION: '100000000',
  RATE_LIMIT_LOGIN: '100000000',
};

/**
 * The configuration every test process (API, worker or command) gets for a test database:
 * DATABASE_URL on PostgreSQL, DATA_DIR (and nothing else) on the embedded database.
 */
export function testEnvironment(db: TestDatabase, env: Record<string, string> = {}): Record<string, string> {
  return {
    ...(db.kind === 'postgres' ? { DATABASE_URL: db.url } : { DATA_DIR: db.dataDir }),
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    DATABASE_POOL_SIZE: '4',
    PASSWORD_HASH_MEMORY_KIB: '1024',
    PASSWORD_HASH_TIME_COST: '1',
    PASSWORD_HASH_PARALLELISM: '1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The limiter stays on (its headers on every answer), with quotas no suite of thousands of
    // requests from one key reaches; test/e2e/auth/rate-limits sets its own.
    ...GENEROUS_RATE_LIMITS,
    ...env,
  };
}

/** How long close() waits for the app to shut down before it reports it and moves on. */
const CLOSE_BOUND_MS = 15_000;

/**
 * The real application, as `npm start` builds it, on this test file's own database: a
 * PostgreSQL database, or on the embedded mode (TEST_DATABASE=embedded) a DATA_DIR of its own
 * with no DATABASE_URL and the in-process queue. `env` overrides configuration (e.g.
 * REDIS_URL, LOGIN_MAX_FAILURES).
 */
export function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const starting = bootTestApp(env, options);
  booting.add(starting);
  starting.then(
    () => booting.delete(starting),
    () => booting.delete(starting),
  );
  return starting;
}

/** This test file's apps still running, and boots under way (a hook that timed out leaves one). */
const running = new Set<TestApp>();
const booting = new Set<Promise<TestApp>>();

/**
 * Closes what a test file left running: an app its afterAll did not close, or one whose boot
 * outlived a timed-out beforeAll (it would otherwise keep its database, queue poller and, on
 * the embedded mode, PGlite alive in the jest worker for the next files). Run after every e2e
 * file (test/utils/jest/e2e-cleanup.ts); bounded by `withinMs`.
 */
export async function closeLeftoverApps(withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(booting), new Promise((resolve) => (timer = setTimeout(resolve, withinMs)))]);
  clearTimeout(timer);
  const leftovers = [...running];
  await Promise.all(leftovers.map((app) => app.close(Math.max(1_000, deadline - Date.now()))));
  return leftovers.length;
}

async function bootTestApp(env: Record<string, string>, options: TestAppOptions): Promise<TestApp> {
  const started = performance.now();
  const db = options.database ?? (await createTestDatabase());
  const databaseReady = performance.now();
  const dataDir = db.kind === 'embedded' ? db.dataDir : mkdtempSync(join(tmpdir(), 'ews-test-'));
  const removeOwn = async () => {
    if (!options.database) await db.drop();
    if (db.kind === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  };
  let app: NestExpressApplication;
  let config: AppConfig;
  try {
    config = AppConfig.fromEnvironment({ ...testEnvironment(db), DATA_DIR: dataDir, ...env });
    ({ app } = await createApp(config, options.logger ?? createRootLogger(config.env.LOG_LEVEL), {
      modules: options.modules,
    }));
  } catch (err) {
    await removeOwn();
    throw err;
  }
  const http = supertest(app.getHttpServer());
  // Every answer, to any client, is checked against the served document (test/utils/response-contract.ts).
  if (responseCheckEnabled) {
    try {
      const { checkResponses } = await import('./response-contract.js');
      checkResponses(app.getHttpServer(), await fileContract(http));
    } catch (err) {
      await closeWithin(app, CLOSE_BOUND_MS);
      await removeOwn();
      throw err;
    }
  }
  const dataSource = app.get(DataSource);
  let closing: Promise<void> | undefined;
  if (db.kind === 'embedded') watchPool((dataSource.driver as unknown as { master?: unknown }).master);
  if (process.env.TEST_TIMINGS) {
    process.stderr.write(
      `[test-app] ${db.kind}: database ${Math.round(databaseReady - started)} ms, app boot ${Math.round(performance.now() - databaseReady)} ms\n`,
    );
  }
  const testApp: TestApp = {
    app,
    config,
    dataSource,
    db,
    http,
    factory: new Factory(
      http,
      dataSource,
      {
        memoryCost: config.env.PASSWORD_HASH_MEMORY_KIB,
        timeCost: config.env.PASSWORD_HASH_TIME_COST,
        parallelism: config.env.PASSWORD_HASH_PARALLELISM,
      },
      app.get(AccessCache),
    ),
    // Idempotent: a test may stop the app early (the embedded DATA_DIR serves one process).
    close: (withinMs = CLOSE_BOUND_MS) => {
      running.delete(testApp);
      return (closing ??= (async () => {
        await closeWithin(app, withinMs);
        await removeOwn();
      })());
    },
  };
  running.add(testApp);
  return testApp;
}

/** This file's contract: read once, by the first app it boots (again by the next if that failed). */
let contract: Promise<ResponseContract> | undefined;

function fileContract(http: ReturnType<typeof supertest>): Promise<ResponseContract> {
  if (contract) return contract;
  // Loaded by the first app: the files that boot none (the medium tier) never load Prism.
  const loading = import('./response-contract.js').then(({ loadResponseContract }) =>
    loadResponseContract(async () => {
      const res = await http.get('/openapi.json');
      if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
      return res.body as object;
    }),
  );
  loading.catch(() => {
    if (contract === loading) contract = undefined;
  });
  return (contract = loading);
}

/**
 * app.close(), bounded: a shutdown stuck behind a request or job that never ends is reported
 * on stderr and left behind, so afterAll (and the next test file) never waits forever.
 */
async function closeWithin(app: NestExpressApplication, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closing = app.close().then(() => true);
  const bounded = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    if (!(await Promise.race([closing, bounded])))
      process.stderr.write(`\n[test-app] app.close() did not finish within ${ms} ms; left behind\n`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Apps booted one after another on one database, as restarts are: `start` boots one (its env over
 * `defaults`), `stop` closes it, and `closeAll` (for afterAll) closes what is still open and drops
 * the database. `beforeAll` creates the database.
 */
export function restartableApps(defaults: Record<string, string>, options: Omit<TestAppOptions, 'database'> = {}) {
  let db: TestDatabase | undefined;
  const open: TestApp[] = [];
  return {
    async create(): Promise<TestDatabase> {
      db = await createTestDatabase();
      return db;
    },
    async start(env: Record<string, string> = {}): Promise<TestApp> {
      if (!db) throw new Error('restartableApps: call create() (in beforeAll) first');
      const app = await startTestApp({ ...defaults, ...env }, { ...options, database: db });
      open.push(app);
      return app;
    },
    async stop(app: TestApp): Promise<void> {
      open.splice(open.indexOf(app), 1);
      await app.close();
    },
    async closeAll(): Promise<void> {
      for (const app of open.splice(0)) await app.close();
      await db?.drop();
    },
  };
}
