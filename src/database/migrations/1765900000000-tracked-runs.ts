import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATES = `'queued', 'running', 'succeeded', 'failed', 'cancelled'`;

/**
 * Evaluation runs join the tracked-job model (docs/architecture.md#background-work): `runs`
 * keeps the job states, one `failure {code, message}` where there was `state_reason` (a run
 * only ever had a reason when it failed or was cancelled) and the job's last `progress`. An
 * offline run awaiting its outputs is a queued run without a job (its job is made by the upload):
 * the response still says `awaiting_upload`.
 */
export class TrackedRuns1765900000000 implements MigrationInterface {
  name = 'TrackedRuns1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runs ADD COLUMN failure jsonb, ADD COLUMN progress jsonb');
    await q.query(
      `UPDATE runs SET failure = jsonb_build_object('code', state, 'message', coalesce(state_reason, state)) WHERE state IN ('failed', 'cancelled')`,
    );
    await q.query('ALTER TABLE runs DROP COLUMN state_reason, DROP CONSTRAINT runs_state_check');
    await q.query(`UPDATE runs SET state = 'queued', job_id = NULL WHERE state = 'awaiting_upload'`);
    await q.query(
      `ALTER TABLE runs ALTER COLUMN state SET DEFAULT 'queued', ADD CONSTRAINT runs_state_check CHECK (state IN (${STATES})),
        ADD CONSTRAINT runs_failure_check CHECK (failure IS NULL OR coalesce(jsonb_typeof(failure->'code') = 'string' AND jsonb_typeof(failure->'message') = 'string', false))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runs DROP CONSTRAINT runs_failure_check, DROP CONSTRAINT runs_state_check');
    await q.query(`UPDATE runs SET state = 'awaiting_upload' WHERE state = 'queued' AND job_id IS NULL`);
    await q.query(
      `ALTER TABLE runs ALTER COLUMN state DROP DEFAULT, ADD CONSTRAINT runs_state_check CHECK (state IN ('queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'))`,
    );
    await q.query('ALTER TABLE runs ADD COLUMN state_reason text');
    await q.query(`UPDATE runs SET state_reason = failure->>'message'`);
    await q.query('ALTER TABLE runs DROP COLUMN failure, DROP COLUMN progress');
  }
}
