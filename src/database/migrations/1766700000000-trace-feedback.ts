import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * End users' feedback on traces (POST /traces/feedback): a thumbs up or down, a score or a
 * category under a name, keyed by the workspace and the trace id (and span id) as the traces
 * family stores them, so feedback may arrive before its trace lands. `client_key` makes a post
 * safe to retry: the unique index stores one record per key and workspace however many parallel
 * requests carry it (docs/decisions/0020-trace-feedback.md).
 */
export class TraceFeedback1766700000000 implements MigrationInterface {
  name = 'TraceFeedback1766700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE trace_feedback (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      trace_id text NOT NULL,
      span_id text,
      name text NOT NULL,
      value_kind text NOT NULL CHECK (value_kind IN ('number', 'boolean', 'string')),
      value_number double precision,
      value_boolean boolean,
      value_string text,
      comment text,
      user_ref text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      client_key text,
      created_by uuid,
      api_key_id uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CHECK ((value_kind = 'number') = (value_number IS NOT NULL)),
      CHECK ((value_kind = 'boolean') = (value_boolean IS NOT NULL)),
      CHECK ((value_kind = 'string') = (value_string IS NOT NULL))
    )`);
    // NULL keys are distinct: feedback posted without a key is never folded into another.
    await q.query('CREATE UNIQUE INDEX trace_feedback_client_key_idx ON trace_feedback (workspace_id, client_key)');
    await q.query('CREATE INDEX trace_feedback_trace_idx ON trace_feedback (workspace_id, trace_id, span_id)');
    await q.query('CREATE INDEX trace_feedback_name_idx ON trace_feedback (workspace_id, name, created_at, id)');
    await q.query('CREATE INDEX trace_feedback_created_idx ON trace_feedback (workspace_id, created_at, id)');
    // A record with a workspace follows a move like every other (1766300000000-access-changes).
    await q.query(`CREATE TRIGGER trace_feedback_access_moved AFTER UPDATE OF workspace_id ON trace_feedback
      FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE trace_feedback');
  }
}
