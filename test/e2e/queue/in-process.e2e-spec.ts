import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobType } from '#libs/queue/job.types.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { invocations, settledRows, waitFor, waitForStatus } from './support/probes.js';
import { createProbeTables, TestJobs, TestJobsModule } from './support/test-jobs.module.js';

const LEASE_SECONDS = 5;

describe('queue: in-process driver', () => {
  let t: TestApp;
  let queue: JobQueue;
  let transactions: TransactionRunner;

  beforeAll(async () => {
    t = await startTestApp(
      {
        JOB_RETRY_DELAY_MS: '50',
        QUEUE_POLL_INTERVAL_MS: '100',
        JOB_LEASE_SECONDS: String(LEASE_SECONDS),
        QUEUE_CONCURRENCY: '4',
      },
      { modules: [TestJobsModule] },
    );
    await createProbeTables(t.dataSource);
    queue = t.app.get(JobQueue);
    transactions = t.app.get(TransactionRunner);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('a 202 start', () => {
    it('answers 202 with the record and a Location to poll; the job succeeds with its result', async () => {
      const res = await t.http.post('/test-jobs/echo').send({ value: 'hello' }).expect(202);
      expect(res.headers.location).toBe(`/test-jobs/${res.body.id}`);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          type: 'test.echo',
          status: expect.stringMatching(/queued|running|succeeded/),
          attempts: expect.any(Number),
          max_attempts: 3,
        }),
      );
      expect(res.body).not.toHaveProperty('payload');

      const done = await waitFor('the polled job to succeed', async () => {
        const poll = await t.http.get(res.headers.location).expect(200);
        return poll.body.status === 'succeeded' ? poll.body : null;
      });
      expect(done).toEqual(
        expect.objectContaining({
          attempts: 1,
          error: null,
          progress: { stage: 'echoing' },
          result: { echo: 'hello', attempt: 1, worker: queue.workerId },
          finished_at: expect.any(String),
        }),
      );
      expect(await invocations(t.dataSource, done.id)).toHaveLength(1);
      expect(await settledRows(t.dataSource, done.id)).toEqual(['succeeded']);
    });

    it('documents the 202 answer and its Location header in the OpenAPI document', async () => {
      const doc = (await t.http.get('/openapi.json').expect(200)).body;
      const accepted = doc.paths['/test-jobs/echo'].post.responses['202'];
      expect(accepted.headers.Location).toBeDefined();
      expect(accepted.content['application/json'].schema.$ref).toMatch(/JobResponse$/);
    });

    it('refuses a bad body with 400 and an unknown record with 404 (problem+json)', async () => {
      expectProblem(await t.http.post('/test-jobs/echo').send({ value: 7 }), 400, 'validation_failed');
      expectProblem(await t.http.get('/test-jobs/6f0c1c1e-8a59-4d7a-9d4e-1d2a3b4c5d6e'), 404, 'not_found');
    });
  });

  describe('failures', () => {
    it('retries a failing handler with backoff, then fails with the reason and the attempts', async () => {
      const { job } = await queue.enqueue({ type: 'test.flaky', payload: { fail_times: 10 } });
      expect(job.maxAttempts).toBe(4); // the handler's option
      const failed = await waitForStatus(queue, job.id, 'failed');
      expect(failed.attempts).toBe(4);
      expect(failed.error).toEqual({
        message: 'planned failure 4',
        code: 'planned_failure',
        attempts: 4,
        at: expect.any(String),
      });
      expect(failed.finishedAt).toBeInstanceOf(Date);
      const runs = await invocations(t.dataSource, job.id);
      expect(runs.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
      expect(await settledRows(t.dataSource, job.id)).toEqual(['failed']);
    });

    it('a retry that succeeds clears the error', async () => {
      const { job } = await queue.enqueue({ type: 'test.flaky', payload: { fail_times: 1 } });
      const done = await waitForStatus(queue, job.id, 'succeeded');
      expect(done).toEqual(expect.objectContaining({ attempts: 2, error: null, result: { attempt: 2 } }));
    });

    it('keeps the last error on the job between attempts and waits out the backoff before retrying', async () => {
      const { job } = await queue.enqueue({ type: 'test.flaky', payload: { fail_times: 1 }, maxAttempts: 2 });
      expect(job.maxAttempts).toBe(2); // the enqueue's option wins over the handler's
      await waitForStatus(queue, job.id, 'succeeded');
      const rows: Array<{ attempt: number; note: string | null; at: Date }> = await t.dataSource.query(
        'SELECT attempt, note, at FROM test_job_invocations WHERE job_id = $1 ORDER BY attempt',
        [job.id],
      );
      expect(rows.map((r) => [r.attempt, r.note])).toEqual([
        [1, null],
        [2, 'previous: planned failure 1'],
      ]);
      expect(rows[1].at.getTime() - rows[0].at.getTime()).toBeGreaterThanOrEqual(50); // JOB_RETRY_DELAY_MS
    });

    it('a JobFailure with retry: false fails at once', async () => {
      const { job } = await queue.enqueue({ type: 'test.permanent', payload: {} });
      const failed = await waitForStatus(queue, job.id, 'failed');
      expect(failed.attempts).toBe(1);
      expect(failed.error).toEqual(
        expect.objectContaining({ message: 'the dataset is gone', code: 'dataset_missing', attempts: 1 }),
      );
      expect(await settledRows(t.dataSource, job.id)).toEqual(['failed']);
    });

    it('a job of a type nobody handles fails with a clear reason; enqueueing one is refused', async () => {
      const [row] = await t.dataSource.query(
        `INSERT INTO jobs (type, payload) VALUES ('test.nobody', '{}') RETURNING id`,
      );
      const failed = await waitForStatus(queue, row.id, 'failed');
      expect(failed.attempts).toBe(1);
      expect(failed.error).toEqual(
        expect.objectContaining({
          code: 'unknown_job_type',
          message: 'no handler is registered for job type "test.nobody"',
        }),
      );
      // The compiler refuses an undeclared type; a caller past it (a cast, plain JavaScript) meets the queue's own check.
      await expect(queue.enqueue({ type: 'test.nobody' as JobType, payload: {} as never })).rejects.toThrow(
        /no @JobHandler\('test.nobody'\)/,
      );
    });
  });

  describe('cancellation', () => {
    it('cancels a queued job at once; cancelling again or a finished job changes nothing', async () => {
      const { job } = await queue.enqueue({
        type: 'test.echo',
        payload: {},
        runAfter: new Date(Date.now() + 3_600_000),
      });
      const cancelled = await queue.cancel(job.id);
      expect(cancelled).toEqual(
        expect.objectContaining({
          status: 'cancelled',
          cancelRequestedAt: expect.any(Date),
          finishedAt: expect.any(Date),
        }),
      );
      expect(cancelled?.error).toEqual(
        expect.objectContaining({ code: 'cancelled', message: 'cancelled while queued' }),
      );
      expect(await settledRows(t.dataSource, job.id)).toEqual(['cancelled']);
      expect((await queue.cancel(job.id))?.status).toBe('cancelled');
      expect(await invocations(t.dataSource, job.id)).toEqual([]);

      const { job: finished } = await queue.enqueue({ type: 'test.echo', payload: {} });
      await waitForStatus(queue, finished.id, 'succeeded');
      expect((await queue.cancel(finished.id))?.status).toBe('succeeded');
      expect(await queue.cancel('not-a-uuid')).toBeNull();
      expect(await queue.cancel('6f0c1c1e-8a59-4d7a-9d4e-1d2a3b4c5d6e')).toBeNull();
    });

    it('cancelling a running job aborts its handler signal; the job ends cancelled without a retry', async () => {
      const { job } = await queue.enqueue({ type: 'test.wait-for-abort', payload: {} });
      await waitFor('the handler to start', async () => (await invocations(t.dataSource, job.id)).length > 0);
      const requested = await queue.cancel(job.id);
      expect(requested).toEqual(expect.objectContaining({ status: 'running', cancelRequestedAt: expect.any(Date) }));
      const cancelled = await waitForStatus(queue, job.id, 'cancelled');
      expect(cancelled.attempts).toBe(1);
      expect(cancelled.error).toEqual(expect.objectContaining({ code: 'cancelled' }));
      expect((await invocations(t.dataSource, job.id)).map((r) => r.note)).toEqual(['started', 'aborted:cancelled']);
      expect(await settledRows(t.dataSource, job.id)).toEqual(['cancelled']);
    });

    it('a cancellation requested by another process reaches the handler within seconds', async () => {
      const { job } = await queue.enqueue({ type: 'test.wait-for-abort', payload: {} });
      await waitFor('the handler to start', async () => (await invocations(t.dataSource, job.id)).length > 0);
      // What JobQueue.cancel writes for a running job when called in another process.
      await t.dataSource.query('UPDATE jobs SET cancel_requested_at = now() WHERE id = $1', [job.id]);
      const cancelled = await waitForStatus(queue, job.id, 'cancelled', 5000);
      expect(cancelled.attempts).toBe(1);
      expect((await invocations(t.dataSource, job.id)).map((r) => r.note)).toEqual(['started', 'aborted:cancelled']);
    });
  });

  describe('transactions and idempotency', () => {
    it('a job enqueued in a transaction that rolls back does not exist and never runs', async () => {
      const key = `rollback-${Date.now()}`;
      await expect(
        transactions.run(async () => {
          await queue.enqueue({ type: 'test.echo', payload: { value: 'never' }, idempotencyKey: key });
          throw new Error('the family write failed');
        }),
      ).rejects.toThrow('the family write failed');
      expect(await t.dataSource.query('SELECT id FROM jobs WHERE idempotency_key = $1', [key])).toEqual([]);
    });

    it('a job enqueued in a transaction runs only after the commit; one in a rolled-back savepoint is gone', async () => {
      let kept = '';
      let dropped = '';
      await transactions.run(async () => {
        kept = (await queue.enqueue({ type: 'test.echo', payload: { value: 'kept' } })).job.id;
        await transactions
          .savepoint(async () => {
            dropped = (await queue.enqueue({ type: 'test.echo', payload: { value: 'dropped' } })).job.id;
            throw new Error('inner step failed');
          })
          .catch(() => undefined);
        await new Promise((r) => setTimeout(r, 300));
        // Uncommitted: no worker can have seen it (another connection looks; the embedded database has none).
        if (!t.config.embedded) expect(await transactions.outside(() => invocations(t.dataSource, kept))).toEqual([]);
      });
      const done = await waitForStatus(queue, kept, 'succeeded');
      expect(done.result).toEqual(expect.objectContaining({ echo: 'kept' }));
      expect(await queue.get(dropped)).toBeNull();
    });

    it('the same idempotency key returns the same job and runs it once', async () => {
      const key = `idem-${Date.now()}`;
      const first = await queue.enqueue({ type: 'test.echo', payload: { value: 'a' }, idempotencyKey: key });
      const second = await queue.enqueue({ type: 'test.echo', payload: { value: 'b' }, idempotencyKey: key });
      expect(first.created).toBe(true);
      expect(second.created).toBe(false);
      expect(second.job.id).toBe(first.job.id);
      const done = await waitForStatus(queue, first.job.id, 'succeeded');
      expect(done.result).toEqual(expect.objectContaining({ echo: 'a' }));
      expect(await invocations(t.dataSource, first.job.id)).toHaveLength(1);
    });

    it('lists jobs by target and counts them by state for queue views', async () => {
      const owner = await t.factory.newUser();
      const workspace = await t.factory.newWorkspace(owner);
      const target = '0b7d9c52-2c55-4c8e-9a57-6b1f0c0e9a11';
      const later = new Date(Date.now() + 3_600_000);
      const a = await queue.enqueue({
        type: 'test.echo',
        payload: {},
        workspaceId: workspace.id,
        targetType: 'run',
        targetId: target,
        runAfter: later,
        createdBy: owner.id,
      });
      const b = await queue.enqueue({
        type: 'test.echo',
        payload: {},
        workspaceId: workspace.id,
        targetType: 'run',
        targetId: target,
        runAfter: later,
        priority: 5,
      });
      const page = await queue.list({ targetType: 'run', targetId: target }, { skip: 0, take: 10 }, 'claim');
      expect(page.total).toBe(2);
      expect(page.items.map((j) => j.id)).toEqual([b.job.id, a.job.id]); // higher priority first
      expect(
        (await queue.list({ workspaceId: workspace.id, status: 'queued' }, { skip: 0, take: 1 })).items,
      ).toHaveLength(1);
      expect(await queue.countByStatus({ workspaceId: workspace.id })).toEqual({
        queued: 2,
        running: 0,
        succeeded: 0,
        failed: 0,
        cancelled: 0,
      });
      expect((await queue.latestFor('run', target))?.id).toBe(b.job.id);
      await queue.cancel(a.job.id);
      expect(await queue.countByStatus({ workspaceId: workspace.id, type: 'test.echo' })).toEqual(
        expect.objectContaining({ queued: 1, cancelled: 1 }),
      );
      await queue.cancel(b.job.id);
    });
  });

  describe('leases', () => {
    it('a job held by a dead worker whose lease expired runs again on a live worker and completes once', async () => {
      const [row] = await t.dataSource.query(
        `INSERT INTO jobs (type, payload, status, attempts, max_attempts, lease_owner, lease_expires_at, started_at)
         VALUES ('test.echo', '{"value":"orphan"}', 'running', 1, 3, 'dead-host:1:000000#1', now() - interval '1 minute', now() - interval '2 minutes')
         RETURNING id`,
      );
      const done = await waitForStatus(queue, row.id, 'succeeded', 8000);
      expect(done.attempts).toBe(2);
      expect(done.result).toEqual({ echo: 'orphan', attempt: 2, worker: queue.workerId });
      expect(await invocations(t.dataSource, row.id)).toEqual([
        expect.objectContaining({ attempt: 2, worker: queue.workerId }),
      ]);
      expect(await settledRows(t.dataSource, row.id)).toEqual(['succeeded']);
    });

    it('fails a job whose worker was lost on its last attempt, saying so', async () => {
      const [row] = await t.dataSource.query(
        `INSERT INTO jobs (type, payload, status, attempts, max_attempts, lease_owner, lease_expires_at)
         VALUES ('test.echo', '{}', 'running', 3, 3, 'dead-host:1:000000#7', now() - interval '1 minute') RETURNING id`,
      );
      const failed = await waitForStatus(queue, row.id, 'failed', 8000);
      expect(failed.error).toEqual({
        message: 'worker lost (lease expired) after 3 attempts',
        code: 'worker_lost',
        attempts: 3,
        at: expect.any(String),
        worker: 'dead-host:1:000000',
      });
      expect(await invocations(t.dataSource, row.id)).toEqual([]);
      expect(await settledRows(t.dataSource, row.id)).toEqual(['failed']);
    });

    it('a worker that lost its lease cannot record completion once another attempt took the job', async () => {
      const jobs = t.app.get(TestJobs);
      const { job } = await queue.enqueue({ type: 'test.gated', payload: {} });
      await waitFor('attempt 1 to start', async () => (await invocations(t.dataSource, job.id)).length === 1);
      // The lease runs out (as when a worker hangs past JOB_LEASE_SECONDS).
      await t.dataSource.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
        job.id,
      ]);
      await waitFor('attempt 2 to start', async () => (await invocations(t.dataSource, job.id)).length === 2, 8000);
      jobs.openGate(job.id, 2);
      const done = await waitForStatus(queue, job.id, 'succeeded');
      expect(done.result).toEqual({ attempt: 2 });
      // The first attempt now finishes too: its outcome must not count.
      jobs.openGate(job.id, 1);
      await new Promise((r) => setTimeout(r, 500));
      const after = await queue.get(job.id);
      expect(after).toEqual(
        expect.objectContaining({
          status: 'succeeded',
          attempts: 2,
          result: { attempt: 2 },
          finishedAt: done.finishedAt,
        }),
      );
      expect(await settledRows(t.dataSource, job.id)).toEqual(['succeeded']);
    });
  });

  it('registers a queue readiness probe that checks the jobs table', async () => {
    const probes = new Map(t.app.get(ReadinessRegistry).entries());
    expect(probes.has('queue')).toBe(true);
    await expect(probes.get('queue')!()).resolves.toBeUndefined();
    expect(queue.driverKind).toBe('in-process');
  });
});
