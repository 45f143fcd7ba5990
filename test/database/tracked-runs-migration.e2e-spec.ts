import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { TrackedRuns1765900000000 } from '#src/database/migrations/1765900000000-tracked-runs.js';
import { migrationsUpTo, openScratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

/**
 * The migration that brings evaluation runs into the tracked-job model (docs/architecture.md#background-work)
 * on runs of every state as they were before it, and back by its `down`: on a scratch PostgreSQL database,
 * or an embedded one in a scratch directory.
 */
describe('the tracked-runs migration', () => {
  let scratch: ScratchDatabase;
  let db: DataSource;
  let workspaceId: string;
  const job = randomUUID();

  const one = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T> =>
    ((await db.query(sql, params)) as T[])[0];
  const runs = (): Promise<Array<Record<string, unknown>>> => db.query('SELECT * FROM runs ORDER BY name');
  const insert = (runName: string, state: string, reason: string | null, jobId: string | null) =>
    db.query(
      `INSERT INTO runs (workspace_id, name, dataset_id, version_id, sut_id, connection_id, state, state_reason, snapshot, concurrency, job_id)
       VALUES ($1, $2, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), $3, $4, '{}', 1, $5)`,
      [workspaceId, runName, state, reason, jobId],
    );

  beforeAll(async () => {
    scratch = await openScratchDatabase('tracked_runs', migrationsUpTo(TrackedRuns1765900000000));
    db = scratch.dataSource;
    await db.runMigrations({ transaction: 'each' });
    await db.undoLastMigration({ transaction: 'each' });

    // Runs as the table held them before the migration.
    workspaceId = (await one<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('w') RETURNING id`)).id;
    await insert('a-awaiting', 'awaiting_upload', null, null);
    await insert('b-queued', 'queued', null, job);
    await insert('c-running', 'running', null, job);
    await insert('d-succeeded', 'succeeded', null, job);
    await insert('e-failed', 'failed', 'the run could not finish: secret gone', job);
    await insert('f-cancelled', 'cancelled', 'cancelled by request; what was done is kept', job);
    await insert('g-failed-unexplained', 'failed', null, job);
    await db.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await scratch?.close();
  });

  it('keeps the job states, makes reasons failures, and an offline run awaiting its upload a queued run without a job', async () => {
    const rows = (await runs()).map((r) => ({ name: r.name, state: r.state, failure: r.failure, job: r.job_id }));
    expect(rows).toEqual([
      { name: 'a-awaiting', state: 'queued', failure: null, job: null },
      { name: 'b-queued', state: 'queued', failure: null, job },
      { name: 'c-running', state: 'running', failure: null, job },
      { name: 'd-succeeded', state: 'succeeded', failure: null, job },
      {
        name: 'e-failed',
        state: 'failed',
        failure: { code: 'failed', message: 'the run could not finish: secret gone' },
        job,
      },
      {
        name: 'f-cancelled',
        state: 'cancelled',
        failure: { code: 'cancelled', message: 'cancelled by request; what was done is kept' },
        job,
      },
      { name: 'g-failed-unexplained', state: 'failed', failure: { code: 'failed', message: 'failed' }, job },
    ]);
    expect(Object.keys((await runs())[0])).toEqual(expect.arrayContaining(['progress', 'failure']));
    expect(Object.keys((await runs())[0])).not.toContain('state_reason');
  });

  it('holds runs to the common states and the failure shape', async () => {
    await expect(
      db.query(
        `INSERT INTO runs (workspace_id, dataset_id, version_id, sut_id, connection_id, state, snapshot, concurrency)
         VALUES ($1, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'awaiting_upload', '{}', 1)`,
        [workspaceId],
      ),
    ).rejects.toThrow(/runs_state_check/);
    await expect(db.query(`UPDATE runs SET failure = '{"code": 1}' WHERE name = 'e-failed'`)).rejects.toThrow(
      /runs_failure_check/,
    );
    const made = await one<{ state: string }>(
      `INSERT INTO runs (workspace_id, dataset_id, version_id, sut_id, connection_id, snapshot, concurrency)
       VALUES ($1, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), '{}', 1) RETURNING state`,
      [workspaceId],
    );
    expect(made.state).toBe('queued');
    await db.query(`DELETE FROM runs WHERE name = ''`);
  });

  it('goes back: the reasons and awaiting_upload return', async () => {
    await db.undoLastMigration({ transaction: 'each' });
    const rows = (await runs()).map((r) => ({ name: r.name, state: r.state, reason: r.state_reason }));
    expect(rows).toEqual([
      { name: 'a-awaiting', state: 'awaiting_upload', reason: null },
      { name: 'b-queued', state: 'queued', reason: null },
      { name: 'c-running', state: 'running', reason: null },
      { name: 'd-succeeded', state: 'succeeded', reason: null },
      { name: 'e-failed', state: 'failed', reason: 'the run could not finish: secret gone' },
      { name: 'f-cancelled', state: 'cancelled', reason: 'cancelled by request; what was done is kept' },
      { name: 'g-failed-unexplained', state: 'failed', reason: 'failed' },
    ]);
    expect(Object.keys((await runs())[0])).not.toContain('failure');
    await expect(insert('h', 'paused', null, null)).rejects.toThrow(/runs_state_check/);
  });
});
