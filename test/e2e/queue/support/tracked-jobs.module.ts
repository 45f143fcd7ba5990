import { Injectable, Module } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Db } from '#libs/database/unit-of-work.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import type { JobContext, JobOf } from '#libs/queue/job.types.js';
import { trackedRecord, type TrackedTable } from '#libs/queue/tracked-job.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { sleep } from './test-jobs.module.js';

/**
 * A family's table of tracked records, as the tracked-jobs migration shapes them. The tests make
 * it themselves, so the schema types do not know it: it is shaped like a `TrackedTable` (below).
 */
export const TEST_TRACKED_RUNS = trackedRecord('test_tracked_runs' as TrackedTable, 'run_id');

export async function createTrackedTables(dataSource: DataSource): Promise<void> {
  await dataSource.query(`CREATE TABLE IF NOT EXISTS test_tracked_runs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    failure jsonb, progress jsonb, job_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(), started_at timestamptz, finished_at timestamptz)`);
  await dataSource.query(
    'CREATE TABLE IF NOT EXISTS test_tracked_seen (run_id uuid NOT NULL, job_status text NOT NULL, record_state text NOT NULL)',
  );
}

export type TrackedMode = 'succeed' | 'fail' | 'self' | 'wait';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    'test.tracked': { run_id: string; mode: TrackedMode };
  }
}

@Injectable()
export class TrackedTestJobs {
  constructor(
    private readonly db: Db,
    private readonly tracked: TrackedRecords,
  ) {}

  @JobHandler('test.tracked', { maxAttempts: 1, tracks: TEST_TRACKED_RUNS })
  async run({ payload, signal, progress }: JobContext<'test.tracked'>) {
    await progress({ step: 1 });
    if (payload.mode === 'fail') throw new JobFailure('planned failure', { code: 'planned', retry: false });
    if (payload.mode === 'wait') await sleep(60_000, signal);
    if (payload.mode === 'self') await this.tracked.succeed(TEST_TRACKED_RUNS, payload.run_id, { step: 'done' });
    return { mode: payload.mode };
  }

  /** What a family's listener sees: the record already ended by the queue. */
  @OnJobSettled('test.tracked')
  async seen(job: JobOf<'test.tracked'>) {
    const [record]: Array<{ state: string }> = await this.db.query(
      'SELECT state FROM test_tracked_runs WHERE id = $1',
      [job.payload.run_id],
    );
    await this.db.query('INSERT INTO test_tracked_seen (run_id, job_status, record_state) VALUES ($1, $2, $3)', [
      job.payload.run_id,
      job.status,
      record.state,
    ]);
  }
}

@Module({ providers: [TrackedTestJobs] })
export class TrackedTestJobsModule {}
