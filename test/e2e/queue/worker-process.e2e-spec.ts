import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { invocations, settledRows, waitFor, waitForStatus } from './support/probes.js';
import { createProbeTables, TestJobsModule } from './support/test-jobs.module.js';
import {
  deleteQueueKeys,
  startWorkerContext,
  TEST_REDIS_URL,
  uniqueQueuePrefix,
  workerEnvironment,
} from './support/worker-context.js';
import { spawnWorker, type WorkerProcess } from './support/worker-process.js';
import { describeOn } from '../../utils/database-mode.js';

/** Worker processes started by `src/worker.ts`'s createWorker, killed and stopped for real. */
describeOn(
  'postgres',
  'spawns worker processes with DATABASE_URL and REDIS_URL; the embedded database serves one process',
)('queue: worker processes (BullMQ)', () => {
  const prefix = uniqueQueuePrefix();
  const env = { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, JOB_LEASE_SECONDS: '5', JOB_RETRY_DELAY_MS: '50' };
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-worker-proc-'));
  let api: TestApp;
  let queue: JobQueue;
  const children: WorkerProcess[] = [];

  const spawn = async (extra: Record<string, string> = {}) => {
    const child = await spawnWorker({
      ...workerEnvironment(api.db, { ...env, ...extra }),
      DATA_DIR: dataDir,
      RUN_WORKERS: 'true',
    });
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    api = await startTestApp({ ...env, RUN_WORKERS: 'false' }, { modules: [TestJobsModule] });
    await createProbeTables(api.dataSource);
    queue = api.app.get(JobQueue);
  });
  afterAll(async () => {
    for (const child of children)
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await api?.close();
    await deleteQueueKeys(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a job whose worker process is SIGKILLed mid-run is picked up after its lease and completes once', async () => {
    const doomed = await spawn();
    const { job } = await queue.enqueue({ type: 'test.stall-first', payload: {} });
    await waitFor('the child to start attempt 1', async () => (await invocations(api.dataSource, job.id)).length === 1);
    expect((await invocations(api.dataSource, job.id))[0]).toEqual(
      expect.objectContaining({ attempt: 1, worker: doomed.workerId }),
    );

    doomed.child.kill('SIGKILL');
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect((await queue.get(job.id))?.status).toBe('running'); // nobody knows yet: the lease says so

    const survivor = await startWorkerContext(api.db, { ...env, RUN_WORKERS: 'true' });
    try {
      const done = await waitForStatus(queue, job.id, 'succeeded', 15_000);
      expect(done.attempts).toBe(2);
      expect(done.result).toEqual({ attempt: 2, worker: survivor.queue.workerId });
      expect(await invocations(api.dataSource, job.id)).toEqual([
        expect.objectContaining({ attempt: 1, worker: doomed.workerId }),
        expect.objectContaining({ attempt: 2, worker: survivor.queue.workerId }),
      ]);
      expect(await settledRows(api.dataSource, job.id)).toEqual(['succeeded']);
    } finally {
      await survivor.close();
    }
  });

  it('SIGTERM stops a worker process cleanly (exit 0) and hands its unfinished job back to the queue', async () => {
    const worker = await spawn({ QUEUE_SHUTDOWN_GRACE_SECONDS: '1', LOG_LEVEL: 'info', WORKER_NICE: '13' });
    // It took the lower CPU priority WORKER_NICE names (never a higher one than this runner's).
    expect(getPriority(worker.child.pid)).toBe(Math.max(13, getPriority()));
    const { job } = await queue.enqueue({ type: 'test.wait-for-abort', payload: {} });
    await waitFor('the child to start the job', async () => (await invocations(api.dataSource, job.id)).length === 1);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const logs = worker
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; signal?: string });
    expect(logs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ msg: 'worker stopping', signal: 'SIGTERM' }),
        expect.objectContaining({ msg: expect.stringContaining('handed 1 unfinished job(s) back to the queue') }),
        expect.objectContaining({ msg: 'worker stopped' }),
      ]),
    );

    const released = await queue.get(job.id);
    expect(released).toEqual(expect.objectContaining({ status: 'queued', attempts: 0, leaseOwner: null, error: null }));
    expect((await invocations(api.dataSource, job.id)).map((r) => r.note)).toEqual(['started', 'aborted:shutdown']);
    expect((await queue.cancel(job.id))?.status).toBe('cancelled');
  });
});
