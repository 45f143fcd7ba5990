import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recorded release-gate verdicts (POST /runs/{run_id}/gate): which plan version judged the run,
 * against which baseline, the verdict and the checks' counts, when, by whom, and the team's
 * label (a branch such as `main`). `--baseline latest` is the newest run of the same SUT and
 * dataset whose newest verdict (of the label, when one is named) passed
 * (docs/decisions/0003-recorded-gate-verdicts.md). One record per run and `fingerprint` (the
 * plan version, baseline, statistics, label and outcome): recording the same again answers it.
 */
export class RunGateVerdicts1766500000000 implements MigrationInterface {
  name = 'RunGateVerdicts1766500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE run_gate_verdicts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      label text,
      project_id uuid,
      test_plan_id uuid,
      test_plan_name text,
      test_plan_version integer,
      baseline_run_id uuid REFERENCES runs(id) ON DELETE SET NULL,
      alpha double precision NOT NULL,
      min_rows integer,
      verdict text NOT NULL CHECK (verdict IN ('pass', 'fail')),
      failures integer NOT NULL,
      warnings integer NOT NULL,
      passed integer NOT NULL,
      skipped integer NOT NULL,
      fingerprint text NOT NULL,
      recorded_by uuid,
      recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (run_id, fingerprint)
    )`);
    await q.query('CREATE INDEX run_gate_verdicts_run_idx ON run_gate_verdicts (run_id, recorded_at DESC, id DESC)');
    await q.query(
      'CREATE INDEX run_gate_verdicts_label_idx ON run_gate_verdicts (workspace_id, label, recorded_at DESC)',
    );
    // A record with a workspace follows a move like every other (1766300000000-access-changes).
    await q.query(`CREATE TRIGGER run_gate_verdicts_access_moved AFTER UPDATE OF workspace_id ON run_gate_verdicts
      FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE run_gate_verdicts');
  }
}
