import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { Job, JobPayloads } from '#libs/queue/job.types.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { waitFor, waitForStatus } from './support/probes.js';
import { createTrackedTables, TrackedTestJobsModule, type TrackedMode } from './support/tracked-jobs.module.js';

interface TrackedRow {
  state: string;
  failure: { code: string; message: string } | null;
  progress: Record<string, unknown> | null;
  job_id: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

/**
 * The tracked-job model (docs/architecture.md#background-work): a handler that `tracks` a
 * record has the queue move the record's tracked columns with its job, however the job ends.
 */
describe('queue: tracked records', () => {
  let t: TestApp;
  let queue: JobQueue;
  let transactions: TransactionRunner;

  beforeAll(async () => {
    t = await startTestApp({ QUEUE_POLL_INTERVAL_MS: '100' }, { modules: [TrackedTestJobsModule] });
    await createTrackedTables(t.dataSource);
    queue = t.app.get(JobQueue);
    transactions = t.app.get(TransactionRunner);
  });
  afterAll(async () => {
    await t?.close();
  });

  const record = async (id: string): Promise<TrackedRow> =>
    (await t.dataSource.query('SELECT * FROM test_tracked_runs WHERE id = $1', [id]))[0];
  const seen = async (id: string): Promise<Array<{ job_status: string; record_state: string }>> =>
    t.dataSource.query('SELECT job_status, record_state FROM test_tracked_seen WHERE run_id = $1', [id]);

  /** A family's start: the record and its job in one unit of work. */
  async function start(mode: TrackedMode, runAfter?: Date): Promise<{ id: string; job: Job }> {
    return transactions.run(async () => {
      const [{ id }]: Array<{ id: string }> = await t.app
        .get(Db)
        .query('INSERT INTO test_tracked_runs DEFAULT VALUES RETURNING id');
      const { job } = await queue.enqueue({ type: 'test.tracked', payload: { run_id: id, mode }, runAfter });
      return { id, job };
    });
  }

  it('names its job, runs, keeps the progress reported and ends succeeded with its job', async () => {
    const { id, job } = await start('succeed');
    expect((await record(id)).job_id).toBe(job.id);
    await waitForStatus(queue, job.id, 'succeeded');
    const row = await record(id);
    expect(row).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        failure: null,
        progress: { step: 1 },
        job_id: job.id,
        started_at: expect.any(Date),
        finished_at: expect.any(Date),
      }),
    );
    expect(await seen(id)).toEqual([{ job_status: 'succeeded', record_state: 'succeeded' }]);
  });

  it('ends failed with the failure {code, message} of its job; the listeners run after', async () => {
    const { id, job } = await start('fail');
    await waitForStatus(queue, job.id, 'failed');
    expect(await record(id)).toEqual(
      expect.objectContaining({
        state: 'failed',
        failure: { code: 'planned', message: 'planned failure' },
        finished_at: expect.any(Date),
      }),
    );
    expect(await seen(id)).toEqual([{ job_status: 'failed', record_state: 'failed' }]);
  });

  it('ends cancelled when its job is cancelled while queued, in the same transaction', async () => {
    const { id, job } = await start('succeed', new Date(Date.now() + 3_600_000));
    await queue.cancel(job.id);
    expect(await record(id)).toEqual(
      expect.objectContaining({
        state: 'cancelled',
        failure: { code: 'cancelled', message: 'cancelled while queued' },
        started_at: null,
        finished_at: expect.any(Date),
      }),
    );
    expect(await seen(id)).toEqual([{ job_status: 'cancelled', record_state: 'cancelled' }]);
  });

  it('ends cancelled when its running job is cancelled', async () => {
    const { id, job } = await start('wait');
    await waitFor('the record to run', async () => (await record(id)).state === 'running');
    await queue.cancel(job.id);
    await waitForStatus(queue, job.id, 'cancelled');
    expect(await record(id)).toEqual(
      expect.objectContaining({
        state: 'cancelled',
        failure: expect.objectContaining({ code: 'cancelled' }),
        started_at: expect.any(Date),
      }),
    );
  });

  it('leaves a record its handler ended alone', async () => {
    const { id, job } = await start('self');
    await waitForStatus(queue, job.id, 'succeeded');
    const ended = await record(id);
    expect(ended).toEqual(expect.objectContaining({ state: 'succeeded', progress: { step: 'done' } }));
    expect(await seen(id)).toEqual([{ job_status: 'succeeded', record_state: 'succeeded' }]);
  });

  it('refuses to queue a tracked job whose payload names no record', async () => {
    // The compiler refuses the payload; a caller past it (a cast, plain JavaScript) meets the queue's own check.
    const payload = { mode: 'succeed' } as JobPayloads['test.tracked'];
    await expect(queue.enqueue({ type: 'test.tracked', payload })).rejects.toThrow(/names no run_id/);
  });
});
