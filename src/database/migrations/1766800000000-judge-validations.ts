import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Judge validations: how far a judged metric config version agrees with human labels of the same
 * items (docs/decisions/0019-judge-validity.md). One record per validation, kept with the config
 * version it validates: where the labels came from (a run and a column of its rows, or labels
 * handed in), the per-item pairs it was computed from (at most 10,000: paired comparisons of two
 * versions need them) and the result (confusion matrix, rates, kappa with intervals, per
 * dimension value). Records are never changed; a new validation is a new record.
 */
export class JudgeValidations1766800000000 implements MigrationInterface {
  name = 'JudgeValidations1766800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE judge_validations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      metric_config_id uuid NOT NULL REFERENCES metric_configs(id) ON DELETE CASCADE,
      config_name text NOT NULL,
      config_version integer NOT NULL,
      metric text NOT NULL,
      source jsonb NOT NULL,
      level double precision NOT NULL,
      seed integer NOT NULL,
      items integer NOT NULL,
      pairs jsonb NOT NULL,
      result jsonb NOT NULL,
      created_by uuid,
      version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(
      'CREATE INDEX judge_validations_config_idx ON judge_validations (metric_config_id, created_at DESC, id DESC)',
    );
    await q.query('CREATE INDEX judge_validations_workspace_idx ON judge_validations (workspace_id)');
    // A record with a workspace follows a move like every other (1766300000000-access-changes).
    await q.query(`CREATE TRIGGER judge_validations_access_moved AFTER UPDATE OF workspace_id ON judge_validations
      FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE judge_validations');
  }
}
