import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { Redis } from 'ioredis';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { BULLMQ_QUEUE_NAME, bullJobId } from '#libs/queue/drivers/bullmq.driver.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';
import { createTestDatabase } from '../../utils/database.js';
import { invocations, settledRows, waitFor, waitForStatus } from './support/probes.js';
import { createProbeTables, TestJobsModule } from './support/test-jobs.module.js';
import {
  deleteQueueKeys,
  startWorkerContext,
  TEST_REDIS_URL,
  uniqueQueuePrefix,
  type WorkerContext,
} from './support/worker-context.js';
import { describeOn } from '../../utils/database-mode.js';

describeOn(
  'postgres',
  'BullMQ on Redis with worker contexts beside the API on one database; the embedded database serves one process',
)('queue: BullMQ driver (API without workers, two worker processes)', () => {
  const prefix = uniqueQueuePrefix();
  const env = {
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    JOB_RETRY_DELAY_MS: '50',
    JOB_LEASE_SECONDS: '5',
    QUEUE_CONCURRENCY: '3',
  };
  let api: TestApp;
  let queue: JobQueue;
  let workers: WorkerContext[] = [];
  let redis: Redis;

  beforeAll(async () => {
    api = await startTestApp({ ...env, RUN_WORKERS: 'false' }, { modules: [TestJobsModule] });
    await createProbeTables(api.dataSource);
    queue = api.app.get(JobQueue);
    workers = await Promise.all([
      startWorkerContext(api.db, { ...env, RUN_WORKERS: 'true' }),
      startWorkerContext(api.db, { ...env, RUN_WORKERS: 'true' }),
    ]);
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await api?.close();
    redis?.disconnect();
    await deleteQueueKeys(prefix);
  });

  const workerIds = () => workers.map((w) => w.queue.workerId);

  it('leaves the first admin to the API: a worker started first on an empty database creates none, the API then creates it with its ADMIN_PASSWORD', async () => {
    const db = await createTestDatabase();
    const worker = await startWorkerContext(db, { ...env, RUN_WORKERS: 'true', ADMIN_PASSWORD: 'the-workers-own-1' });
    let first: TestApp | undefined;
    try {
      const [{ n }] = await worker.context.get(DataSource).query('SELECT count(*)::int AS n FROM users');
      expect(n).toBe(0);
      first = await startTestApp({ ...env, RUN_WORKERS: 'false' }, { database: db });
      await first.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }).expect(200);
      await first.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: 'the-workers-own-1' }).expect(401);
    } finally {
      await first?.close();
      await worker.close();
      await db.drop();
    }
  });

  it('delivers through Redis: a 202 start is run by a worker process, not by the API', async () => {
    expect(queue.driverKind).toBe('bullmq');
    const res = await api.http.post('/test-jobs/echo').send({ value: 'via redis' }).expect(202);
    expect(res.headers.location).toBe(`/test-jobs/${res.body.id}`);
    const done = await waitForStatus(queue, res.body.id, 'succeeded');
    expect(done.result).toEqual(expect.objectContaining({ echo: 'via redis', attempt: 1 }));
    expect(workerIds()).toContain((done.result as { worker: string }).worker);
    expect((done.result as { worker: string }).worker).not.toBe(queue.workerId);
    expect(await settledRows(api.dataSource, done.id)).toEqual(['succeeded']);
  });

  it('retries through BullMQ with backoff, then fails with the reason and the attempts', async () => {
    const { job } = await queue.enqueue({ type: 'test.flaky', payload: { fail_times: 10 } });
    const failed = await waitForStatus(queue, job.id, 'failed');
    expect(failed.attempts).toBe(4);
    expect(failed.error).toEqual(
      expect.objectContaining({ message: 'planned failure 4', code: 'planned_failure', attempts: 4 }),
    );
    expect((await invocations(api.dataSource, job.id)).map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    expect(await settledRows(api.dataSource, job.id)).toEqual(['failed']);
  });

  it('two workers racing over many jobs complete each exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await queue.enqueue({ type: 'test.sleep', payload: { ms: 25 } })).job.id);
    for (const id of ids) await waitForStatus(queue, id, 'succeeded', 20_000);
    const rows: Array<{ job_id: string; n: number }> = await api.dataSource.query(
      `SELECT job_id, count(*)::int AS n FROM test_job_invocations WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`,
      [ids],
    );
    expect(rows).toHaveLength(40);
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    const ran: Array<{ worker: string }> = await api.dataSource.query(
      `SELECT DISTINCT worker FROM test_job_invocations WHERE job_id = ANY($1::uuid[])`,
      [ids],
    );
    expect(ran.every((r) => workerIds().includes(r.worker))).toBe(true);
  });

  it('a duplicate delivery of a job is skipped: the row is claimed once', async () => {
    const { job } = await queue.enqueue({ type: 'test.sleep', payload: { ms: 300 } });
    // Deliver the same row again under another BullMQ id, as a stale or doubled delivery would.
    await waitFor('the job to start', async () => (await queue.get(job.id))?.status === 'running');
    const { Queue } = await import('bullmq');
    const raw = new Queue(BULLMQ_QUEUE_NAME, { connection: { url: TEST_REDIS_URL }, prefix });
    await raw.add('test.sleep', { id: job.id }, { jobId: `${job.id}.duplicate` });
    await raw.close();
    await waitForStatus(queue, job.id, 'succeeded');
    await new Promise((r) => setTimeout(r, 300));
    expect(await invocations(api.dataSource, job.id)).toHaveLength(1);
  });

  it('cancelling from the API aborts the handler running in a worker process', async () => {
    const { job } = await queue.enqueue({ type: 'test.wait-for-abort', payload: {} });
    await waitFor('the handler to start', async () => (await invocations(api.dataSource, job.id)).length > 0);
    await queue.cancel(job.id);
    const cancelled = await waitForStatus(queue, job.id, 'cancelled', 5000);
    expect(cancelled.attempts).toBe(1);
    expect((await invocations(api.dataSource, job.id)).map((r) => r.note)).toEqual(['started', 'aborted:cancelled']);
  });

  it('re-adds queued jobs Redis does not hold (a flush, or a crash between commit and add)', async () => {
    // Committed but never handed to BullMQ: only the sweeper's resync can deliver it.
    const [row] = await api.dataSource.query(
      `INSERT INTO jobs (type, payload, run_after) VALUES ('test.echo', '{"value":"lost"}', now() - interval '30 seconds') RETURNING id, run_after`,
    );
    expect(
      await redis.exists(`${prefix}:${BULLMQ_QUEUE_NAME}:${bullJobId({ id: row.id, runAfter: row.run_after })}`),
    ).toBe(0);
    const done = await waitForStatus(queue, row.id, 'succeeded', 10_000);
    expect(done.result).toEqual(expect.objectContaining({ echo: 'lost', attempt: 1 }));
    expect(await invocations(api.dataSource, row.id)).toHaveLength(1);
  });

  it('a job held by a dead worker is run again after its lease expires', async () => {
    const [row] = await api.dataSource.query(
      `INSERT INTO jobs (type, payload, status, attempts, lease_owner, lease_expires_at)
       VALUES ('test.echo', '{"value":"orphan"}', 'running', 1, 'dead-host:2:000000#3', now() - interval '1 second') RETURNING id`,
    );
    const done = await waitForStatus(queue, row.id, 'succeeded', 10_000);
    expect(done.attempts).toBe(2);
    expect(workerIds()).toContain((done.result as { worker: string }).worker);
  });

  it('the queue readiness probe PINGs Redis, and fails within about 2 s when Redis does not answer', async () => {
    const probe = new Map(api.app.get(ReadinessRegistry).entries()).get('queue')!;
    await expect(probe()).resolves.toBeUndefined();

    const unreachable = await startWorkerContext(api.db, {
      ...env,
      REDIS_URL: 'redis://127.0.0.1:1',
      RUN_WORKERS: 'false',
    });
    try {
      const broken = new Map(unreachable.context.get(ReadinessRegistry).entries()).get('queue')!;
      const started = Date.now();
      await expect(broken()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await unreachable.close();
    }
  });
});
