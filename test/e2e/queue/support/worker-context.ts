import type { INestApplicationContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AppConfig } from '#libs/config/app-config.js';
import { createWorker } from '#src/worker.js';
import { requirePostgres, type TestDatabase } from '../../../utils/database.js';
import { testEnvironment } from '../../../utils/test-app.js';
import { TestJobs, TestJobsModule } from './test-jobs.module.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ key prefix of its own, so test files running at once do not share a queue. */
export function uniqueQueuePrefix(): string {
  return `ews-test-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** Removes every Redis key under the prefix. */
export async function deleteQueueKeys(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** What a worker process's environment holds, for the test database (and Redis) given: PostgreSQL only. */
export function workerEnvironment(db: TestDatabase, env: Record<string, string> = {}): Record<string, string> {
  return testEnvironment(requirePostgres(db), env);
}

export interface WorkerContext {
  context: INestApplicationContext;
  queue: JobQueue;
  jobs: TestJobs;
  close(): Promise<void>;
}

/**
 * A worker (no HTTP) built by `createWorker`, as `npm run start:worker` builds it, with the test
 * handlers, beside the API on the same database: PostgreSQL only (the embedded database serves
 * one process).
 */
export async function startWorkerContext(db: TestDatabase, env: Record<string, string> = {}): Promise<WorkerContext> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-worker-'));
  const config = AppConfig.fromEnvironment({ ...workerEnvironment(db, env), DATA_DIR: dataDir });
  const context = await createWorker(config, { modules: [TestJobsModule] });
  return {
    context,
    queue: context.get(JobQueue),
    jobs: context.get(TestJobs),
    close: async () => {
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
