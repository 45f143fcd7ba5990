import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { TestDatabase } from '../../utils/database.js';
import { itOn } from '../../utils/database-mode.js';
import { restartableApps } from '../../utils/test-app.js';
import { invocations, waitFor, waitForStatus } from './support/probes.js';
import { createProbeTables, TestJobsModule } from './support/test-jobs.module.js';
import { startWorkerContext } from './support/worker-context.js';

const FAST = { QUEUE_POLL_INTERVAL_MS: '100', JOB_RETRY_DELAY_MS: '50', JOB_LEASE_SECONDS: '5' };

/** The in-process driver, as `npm start` runs it, on either database: jobs outlive the process. */
describe('queue: durable across restarts (in-process driver)', () => {
  const apps = restartableApps(FAST, { modules: [TestJobsModule] });
  const { start, stop } = apps;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await apps.create();
  });
  afterAll(() => apps.closeAll());

  it('a job enqueued by a process without workers runs after a restart with workers', async () => {
    const api = await start({ RUN_WORKERS: 'false' });
    await createProbeTables(api.dataSource);
    const { job } = await api.app.get(JobQueue).enqueue({ type: 'test.echo', payload: { value: 'persisted' } });
    await new Promise((r) => setTimeout(r, 400));
    expect((await api.app.get(JobQueue).get(job.id))?.status).toBe('queued');
    await stop(api);

    const worker = await start({});
    const done = await waitForStatus(worker.app.get(JobQueue), job.id, 'succeeded');
    expect(done.result).toEqual(
      expect.objectContaining({ echo: 'persisted', attempt: 1, worker: worker.app.get(JobQueue).workerId }),
    );
    await stop(worker);
  });

  it('on shutdown a running job whose handler does not finish in the grace period goes back to the queue, its attempt not counted', async () => {
    const first = await start({ QUEUE_SHUTDOWN_GRACE_SECONDS: '1' });
    const queue = first.app.get(JobQueue);
    const firstWorker = queue.workerId;
    const { job } = await queue.enqueue({ type: 'test.wait-for-abort', payload: {} });
    await waitFor('the handler to start', async () => (await invocations(first.dataSource, job.id)).length > 0);
    const started = Date.now();
    await stop(first);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const second = await start({});
    const after = second.app.get(JobQueue);
    const released = await after.get(job.id);
    // Either still queued, or already taken again by the new process: never failed, never lost.
    expect(released?.status).toMatch(/^(queued|running)$/);
    await waitFor('the job to run again on the new process', async () => {
      const runs = await invocations(second.dataSource, job.id);
      return runs.some((r) => r.worker === after.workerId && r.note === 'started');
    });
    // The first handler saw its signal abort with reason `shutdown` (and could clean up).
    expect(await invocations(second.dataSource, job.id)).toEqual(
      expect.arrayContaining([expect.objectContaining({ worker: firstWorker, note: 'aborted:shutdown', attempt: 1 })]),
    );
    const rerun = await after.get(job.id);
    expect(rerun).toEqual(expect.objectContaining({ status: 'running', attempts: 1 }));
    await after.cancel(job.id);
    await waitForStatus(after, job.id, 'cancelled');
    await stop(second);
  });

  itOn('postgres', 'a second process on the same database; the embedded database serves one process')(
    'two processes polling one database run each job exactly once',
    async () => {
      const api = await start({ QUEUE_CONCURRENCY: '3' });
      const other = await startWorkerContext(db, { ...FAST, QUEUE_CONCURRENCY: '3' });
      try {
        const queue = api.app.get(JobQueue);
        const ids: string[] = [];
        for (let i = 0; i < 30; i++)
          ids.push((await queue.enqueue({ type: 'test.sleep', payload: { ms: 20 } })).job.id);
        for (const id of ids) await waitForStatus(queue, id, 'succeeded', 15_000);
        const rows: Array<{ job_id: string; n: number; workers: number }> = await api.dataSource.query(
          `SELECT job_id, count(*)::int AS n, count(DISTINCT worker)::int AS workers FROM test_job_invocations WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`,
          [ids],
        );
        expect(rows).toHaveLength(30);
        expect(rows.every((r) => r.n === 1)).toBe(true);
        const [{ attempts }] = await api.dataSource.query(
          `SELECT max(attempts)::int AS attempts FROM jobs WHERE id = ANY($1::uuid[])`,
          [ids],
        );
        expect(attempts).toBe(1);
      } finally {
        await other.close();
      }
    },
  );
});
