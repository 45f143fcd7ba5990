import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scores of production traces (docs/online-evaluation.md): one row per evaluator version, scored
 * target (a span, a trace or a session) and metric, kept by the traces family with the traces it
 * scores, so queries, enrichment and retention read them beside the spans. The unique key is what
 * makes a target scored once per evaluator version whatever retries, restarts or parallel
 * workers do: a second write of the same key inserts nothing.
 */
export class TraceScores1767000000000 implements MigrationInterface {
  name = 'TraceScores1767000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE trace_scores (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      evaluator_id uuid NOT NULL,
      evaluator_name text NOT NULL,
      evaluator_version integer NOT NULL,
      level text NOT NULL CHECK (level IN ('span', 'trace', 'session')),
      target_key text NOT NULL,
      trace_id text,
      span_id text,
      session_id text,
      metric text NOT NULL,
      score double precision,
      passed boolean,
      label text,
      reason text,
      error text,
      detail jsonb,
      service_name text,
      model text,
      cost_usd double precision,
      observed_at timestamptz NOT NULL,
      scored_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (evaluator_id, evaluator_version, target_key, metric)
    )`);
    await q.query('CREATE INDEX trace_scores_trace_idx ON trace_scores (workspace_id, dataset_id, trace_id)');
    await q.query('CREATE INDEX trace_scores_window_idx ON trace_scores (evaluator_id, metric, observed_at)');
    await q.query('CREATE INDEX trace_scores_observed_idx ON trace_scores (workspace_id, dataset_id, observed_at)');
    await q.query(`CREATE TRIGGER trace_scores_access_moved AFTER UPDATE OF workspace_id ON trace_scores
      FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE trace_scores');
  }
}
