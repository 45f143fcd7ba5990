import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The tables that follow one background operation each (docs/architecture.md#background-work). */
const TRACKED = [
  'analysis_runs',
  'cluster_runs',
  'sdg_runs',
  'trace_ingest_runs',
  'trace_enrichment_runs',
  'data_operation_runs',
  'custom_op_revisions',
];
const STATES = `'queued', 'running', 'succeeded', 'failed', 'cancelled'`;

/**
 * One tracked-job model: every table above gets the same state vocabulary (the job states),
 * one failure shape (`failure jsonb {code, message, details?}` where there were `state_reason`
 * and `error` texts and `error` objects), `progress jsonb`, `job_id` and started/finished
 * times. The responses keep each operation's documented states (the families map them).
 */
export class TrackedJobs1765500000000 implements MigrationInterface {
  name = 'TrackedJobs1765500000000';

  async up(q: QueryRunner): Promise<void> {
    // Texts become failures; a reason was only ever written when the run failed.
    for (const [table, column] of [
      ['analysis_runs', 'state_reason'],
      ['cluster_runs', 'state_reason'],
      ['sdg_runs', 'state_reason'],
      ['data_operation_runs', 'error'],
    ]) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN failure jsonb`);
      await q.query(
        `UPDATE ${table} SET failure = jsonb_build_object('code', 'failed', 'message', ${column}) WHERE ${column} IS NOT NULL`,
      );
      await q.query(`ALTER TABLE ${table} DROP COLUMN ${column}`);
    }
    for (const table of ['trace_ingest_runs', 'trace_enrichment_runs'])
      await q.query(`ALTER TABLE ${table} RENAME COLUMN error TO failure`);
    await q.query('ALTER TABLE sdg_runs ADD COLUMN progress jsonb, ADD COLUMN started_at timestamptz');
    await q.query('ALTER TABLE trace_ingest_runs ADD COLUMN progress jsonb');
    await q.query(
      'ALTER TABLE data_operation_runs ADD COLUMN progress jsonb, ADD COLUMN job_id uuid, ADD COLUMN started_at timestamptz',
    );
    await q.query('UPDATE data_operation_runs SET started_at = created_at');
    // An enrichment's counts of traces are its progress.
    await q.query('ALTER TABLE trace_enrichment_runs ADD COLUMN progress jsonb');
    await q.query(
      `UPDATE trace_enrichment_runs SET progress = jsonb_build_object('done', traces_done, 'total', traces_total)`,
    );
    await q.query('ALTER TABLE trace_enrichment_runs DROP COLUMN traces_total, DROP COLUMN traces_done');
    await this.revisionsUp(q);
    for (const table of TRACKED) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_state_check`);
      await q.query(`ALTER TABLE ${table} ALTER COLUMN state SET DEFAULT 'queued'`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_state_check CHECK (state IN (${STATES}))`);
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_failure_check CHECK (failure IS NULL OR coalesce(jsonb_typeof(failure->'code') = 'string' AND jsonb_typeof(failure->'message') = 'string', false))`,
      );
    }
  }

  /** Revisions: the check's outcome becomes its tracked state; its queued jobs name the revision they settle. */
  private async revisionsUp(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE custom_op_revisions ADD COLUMN state text NOT NULL DEFAULT 'queued', ADD COLUMN failure jsonb, ADD COLUMN progress jsonb,
      ADD COLUMN job_id uuid, ADD COLUMN started_at timestamptz, ADD COLUMN superseded_at timestamptz`);
    await q.query('ALTER TABLE custom_op_revisions RENAME COLUMN checked_at TO finished_at');
    await q.query(`UPDATE custom_op_revisions SET
        superseded_at = CASE WHEN outcome = 'superseded' THEN coalesce(finished_at, created_at) END,
        state = CASE WHEN outcome = 'deploying' THEN 'queued' WHEN outcome = 'active' THEN 'succeeded' WHEN outcome = 'failed' THEN 'failed'
                     WHEN finished_at IS NULL THEN 'cancelled' WHEN reason IS NULL THEN 'succeeded' ELSE 'failed' END,
        failure = CASE WHEN outcome = 'superseded' AND finished_at IS NULL THEN jsonb_build_object('code', 'not_checked', 'message', 'replaced before its health check ran')
                       WHEN reason IS NOT NULL THEN jsonb_build_object('code', 'unhealthy', 'message', reason) END,
        finished_at = CASE WHEN outcome = 'superseded' THEN coalesce(finished_at, created_at) ELSE finished_at END`);
    await q.query(`UPDATE custom_op_revisions r SET job_id = j.id, started_at = j.started_at FROM jobs j
      WHERE j.type = 'ops.custom-op-deploy' AND j.payload->>'custom_op_id' = r.custom_op_id::text AND j.payload->>'revision' = r.revision::text`);
    await q.query(`UPDATE jobs j SET payload = j.payload || jsonb_build_object('revision_id', r.id) FROM custom_op_revisions r
      WHERE j.type = 'ops.custom-op-deploy' AND j.payload->>'custom_op_id' = r.custom_op_id::text AND j.payload->>'revision' = r.revision::text`);
    await q.query('ALTER TABLE custom_op_revisions DROP COLUMN outcome, DROP COLUMN reason');
  }

  private async revisionsDown(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE custom_op_revisions ADD COLUMN outcome text NOT NULL DEFAULT 'deploying' CHECK (outcome IN ('deploying', 'active', 'failed', 'superseded')), ADD COLUMN reason text`,
    );
    await q.query(`UPDATE custom_op_revisions SET reason = failure->>'message',
        outcome = CASE WHEN superseded_at IS NOT NULL THEN 'superseded' WHEN state = 'succeeded' THEN 'active' WHEN state IN ('failed', 'cancelled') THEN 'failed' ELSE 'deploying' END`);
    await q.query('ALTER TABLE custom_op_revisions ALTER COLUMN outcome DROP DEFAULT');
    await q.query(
      'ALTER TABLE custom_op_revisions DROP COLUMN state, DROP COLUMN failure, DROP COLUMN progress, DROP COLUMN job_id, DROP COLUMN started_at, DROP COLUMN superseded_at',
    );
    await q.query('ALTER TABLE custom_op_revisions RENAME COLUMN finished_at TO checked_at');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TRACKED) {
      await q.query(
        `ALTER TABLE ${table} DROP CONSTRAINT ${table}_failure_check, DROP CONSTRAINT ${table}_state_check`,
      );
    }
    await this.revisionsDown(q);
    // Vocabularies without `cancelled` (or `queued`) take the state their responses showed.
    for (const table of ['analysis_runs', 'cluster_runs', 'sdg_runs', 'data_operation_runs'])
      await q.query(`UPDATE ${table} SET state = 'failed' WHERE state = 'cancelled'`);
    await q.query(`UPDATE data_operation_runs SET state = 'running' WHERE state = 'queued'`);
    for (const table of ['analysis_runs', 'cluster_runs', 'sdg_runs']) {
      await q.query(
        `ALTER TABLE ${table} ALTER COLUMN state DROP DEFAULT, ADD CONSTRAINT ${table}_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed'))`,
      );
    }
    await q.query(
      `ALTER TABLE data_operation_runs ALTER COLUMN state DROP DEFAULT, ADD CONSTRAINT data_operation_runs_state_check CHECK (state IN ('running', 'succeeded', 'failed'))`,
    );
    for (const table of ['trace_ingest_runs', 'trace_enrichment_runs'])
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_state_check CHECK (state IN (${STATES}))`);

    await q.query(
      'ALTER TABLE trace_enrichment_runs ADD COLUMN traces_total integer NOT NULL DEFAULT 0, ADD COLUMN traces_done integer NOT NULL DEFAULT 0',
    );
    await q.query(
      `UPDATE trace_enrichment_runs SET traces_total = coalesce((progress->>'total')::int, 0), traces_done = coalesce((progress->>'done')::int, 0)`,
    );
    await q.query('ALTER TABLE trace_enrichment_runs DROP COLUMN progress');
    await q.query('ALTER TABLE data_operation_runs DROP COLUMN progress, DROP COLUMN job_id, DROP COLUMN started_at');
    await q.query('ALTER TABLE trace_ingest_runs DROP COLUMN progress');
    await q.query('ALTER TABLE sdg_runs DROP COLUMN progress, DROP COLUMN started_at');
    for (const table of ['trace_ingest_runs', 'trace_enrichment_runs'])
      await q.query(`ALTER TABLE ${table} RENAME COLUMN failure TO error`);
    for (const [table, column] of [
      ['analysis_runs', 'state_reason'],
      ['cluster_runs', 'state_reason'],
      ['sdg_runs', 'state_reason'],
      ['data_operation_runs', 'error'],
    ]) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN ${column} text`);
      await q.query(`UPDATE ${table} SET ${column} = failure->>'message'`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN failure`);
    }
  }
}
