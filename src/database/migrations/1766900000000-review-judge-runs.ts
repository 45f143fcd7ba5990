import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Judge runs of review queues: a judged metric config version applied to a queue's finally
 * labelled items on request, as a tracked job (docs/review.md, "Validate a judge on a queue's
 * items"). One record per request: what it asked (the config version, the rubric field and
 * version, the values meaning pass), the tracked columns of its job (docs/queue.md), what it
 * counted (items, graded, ungraded, unlabelled, the first errors) and the validation it recorded.
 */
export class ReviewJudgeRuns1766900000000 implements MigrationInterface {
  name = 'ReviewJudgeRuns1766900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE review_judge_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      queue_id uuid NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
      metric_config_id uuid NOT NULL,
      config_name text NOT NULL,
      config_version integer NOT NULL,
      field text NOT NULL,
      rubric_version integer NOT NULL,
      positive jsonb,
      confidence double precision NOT NULL,
      seed integer NOT NULL,
      items integer NOT NULL DEFAULT 0,
      graded integer NOT NULL DEFAULT 0,
      ungraded integer NOT NULL DEFAULT 0,
      unlabelled integer NOT NULL DEFAULT 0,
      errors jsonb NOT NULL DEFAULT '[]',
      validation_id uuid,
      created_by uuid,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      failure jsonb CHECK (failure IS NULL OR coalesce(jsonb_typeof(failure->'code') = 'string' AND jsonb_typeof(failure->'message') = 'string', false)),
      progress jsonb,
      job_id uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    await q.query('CREATE INDEX review_judge_runs_queue_idx ON review_judge_runs (queue_id, created_at DESC, id)');
    await q.query('CREATE INDEX review_judge_runs_workspace_idx ON review_judge_runs (workspace_id)');
    // A record with a workspace follows a move like every other (1766300000000-access-changes).
    await q.query(`CREATE TRIGGER review_judge_runs_access_moved AFTER UPDATE OF workspace_id ON review_judge_runs
      FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE review_judge_runs');
  }
}
