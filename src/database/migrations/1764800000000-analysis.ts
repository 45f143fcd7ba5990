import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Analyses of a dataset version (text, annotation, visual) computed by queued runs, with the
 * per-row properties the /query paths filter on, and clustering runs.
 */
export class Analysis1764800000000 implements MigrationInterface {
  name = 'Analysis1764800000000';

  async up(q: QueryRunner): Promise<void> {
    const common = `id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      state text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
      state_reason text,
      params jsonb NOT NULL,
      progress jsonb,
      job_id uuid,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      started_at timestamptz,
      finished_at timestamptz`;
    await q.query(`CREATE TABLE analysis_runs (${common}, kinds text[] NOT NULL)`);
    await q.query('CREATE INDEX analysis_runs_version_idx ON analysis_runs (version_id, created_at DESC)');
    await q.query(`CREATE TABLE analysis_results (
      run_id uuid NOT NULL REFERENCES analysis_runs(id) ON DELETE CASCADE,
      kind text NOT NULL,
      result jsonb NOT NULL,
      PRIMARY KEY (run_id, kind)
    )`);
    await q.query(`CREATE TABLE analysis_row_properties (
      run_id uuid NOT NULL REFERENCES analysis_runs(id) ON DELETE CASCADE,
      kind text NOT NULL,
      row_id uuid NOT NULL,
      ordinal bigint NOT NULL,
      props jsonb NOT NULL,
      PRIMARY KEY (run_id, kind, row_id)
    )`);
    await q.query('CREATE INDEX analysis_row_properties_order_idx ON analysis_row_properties (run_id, kind, ordinal)');
    await q.query(`CREATE TABLE cluster_runs (${common}, result jsonb)`);
    await q.query('CREATE INDEX cluster_runs_version_idx ON cluster_runs (version_id, created_at DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['cluster_runs', 'analysis_row_properties', 'analysis_results', 'analysis_runs'])
      await q.query(`DROP TABLE ${table}`);
  }
}
