import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Online evaluation (docs/online-evaluation.md): evaluators on a trace dataset with their
 * versions; the ledger of targets each evaluator version has taken (sampled, then scored, skipped
 * or failed: its primary key is what keeps a target to one entry however often it is seen); and
 * backfills, tracked like every background operation. The evaluator keeps the ordinal of the last
 * span it read (`cursor_ordinal`), so continuous scoring reads each landed span once, and the job
 * following it (`follow_job_id`, when it may start, and whether spans landed while it ran) so one
 * follows each evaluator however many landings tell it.
 */
export class OnlineEvaluation1767100000000 implements MigrationInterface {
  name = 'OnlineEvaluation1767100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE online_evaluators (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused')),
      status text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'judge_unreachable', 'budget_exhausted', 'misconfigured')),
      status_detail text,
      status_since timestamptz,
      version integer NOT NULL DEFAULT 1,
      cursor_ordinal bigint NOT NULL DEFAULT -1,
      spans_read bigint NOT NULL DEFAULT 0,
      traces_seen bigint NOT NULL DEFAULT 0,
      targets_sampled bigint NOT NULL DEFAULT 0,
      follow_job_id uuid,
      follow_run_after timestamptz,
      follow_again boolean NOT NULL DEFAULT false,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, name)
    )`);
    await q.query(
      'CREATE INDEX online_evaluators_workspace_idx ON online_evaluators (workspace_id, created_at DESC, id)',
    );
    await q.query(`CREATE TABLE online_evaluator_versions (
      evaluator_id uuid NOT NULL REFERENCES online_evaluators(id) ON DELETE CASCADE,
      version integer NOT NULL,
      spec jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (evaluator_id, version)
    )`);
    await q.query(`CREATE TABLE online_targets (
      evaluator_id uuid NOT NULL REFERENCES online_evaluators(id) ON DELETE CASCADE,
      evaluator_version integer NOT NULL,
      target_key text NOT NULL,
      level text NOT NULL CHECK (level IN ('span', 'trace', 'session')),
      trace_id text,
      span_id text,
      session_id text,
      origin text NOT NULL CHECK (origin IN ('continuous', 'backfill')),
      backfill_id uuid,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'scored', 'skipped', 'failed')),
      reason text,
      complete boolean NOT NULL DEFAULT false,
      ready_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      attempts integer NOT NULL DEFAULT 0,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      finished_at timestamptz,
      PRIMARY KEY (evaluator_id, evaluator_version, target_key)
    )`);
    await q.query(
      `CREATE INDEX online_targets_ready_idx ON online_targets (evaluator_id, ready_at) WHERE state = 'pending'`,
    );
    await q.query(
      'CREATE INDEX online_targets_backfill_idx ON online_targets (backfill_id, state) WHERE backfill_id IS NOT NULL',
    );
    await q.query(`CREATE TABLE online_backfills (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      evaluator_id uuid NOT NULL REFERENCES online_evaluators(id) ON DELETE CASCADE,
      evaluator_version integer NOT NULL,
      from_time timestamptz NOT NULL,
      to_time timestamptz NOT NULL,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      failure jsonb CHECK (failure IS NULL OR coalesce(jsonb_typeof(failure->'code') = 'string' AND jsonb_typeof(failure->'message') = 'string', false)),
      progress jsonb,
      spans_read bigint NOT NULL DEFAULT 0,
      targets_sampled integer NOT NULL DEFAULT 0,
      job_id uuid,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    await q.query(
      'CREATE INDEX online_backfills_evaluator_idx ON online_backfills (evaluator_id, created_at DESC, id)',
    );
    for (const table of ['online_evaluators', 'online_backfills'])
      await q.query(`CREATE TRIGGER ${table}_access_moved AFTER UPDATE OF workspace_id ON ${table}
        FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE online_backfills');
    await q.query('DROP TABLE online_targets');
    await q.query('DROP TABLE online_evaluator_versions');
    await q.query('DROP TABLE online_evaluators');
  }
}
