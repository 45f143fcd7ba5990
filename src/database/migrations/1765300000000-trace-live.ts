import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Live trace landing (the OTLP/HTTP receiver): spans an exporter sent wait in `trace_inbox`
 * (durable before the exporter is answered, one row per dataset and span) until the landing job
 * moves them into the dataset's open head version; `trace_live_streams` holds, per dataset, that
 * head, its sealing window and the counters of the stream. `trace_retention` says how long a
 * workspace's (or one dataset's) trace data is kept.
 */
export class TraceLive1765300000000 implements MigrationInterface {
  name = 'TraceLive1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trace_ingest_runs DROP CONSTRAINT IF EXISTS trace_ingest_runs_source_kind_check`);
    await q.query(
      `ALTER TABLE trace_ingest_runs ADD CONSTRAINT trace_ingest_runs_source_kind_check CHECK (source_kind IN ('upload', 'inline', 'connection', 'otlp'))`,
    );
    await q.query(`CREATE TABLE trace_live_streams (
      dataset_id uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      ingest_run_id uuid NOT NULL REFERENCES trace_ingest_runs(id) ON DELETE CASCADE,
      head_version_id uuid REFERENCES dataset_versions(id) ON DELETE SET NULL,
      head_opened_at timestamptz,
      head_spans integer NOT NULL DEFAULT 0,
      window_seconds integer NOT NULL DEFAULT 3600 CHECK (window_seconds BETWEEN 10 AND 2592000),
      max_spans integer NOT NULL DEFAULT 100000 CHECK (max_spans BETWEEN 1 AND 10000000),
      pending integer NOT NULL DEFAULT 0,
      land_queued boolean NOT NULL DEFAULT false,
      last_received_at timestamptz,
      last_landed_at timestamptz,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX trace_live_streams_workspace_idx ON trace_live_streams (workspace_id)');
    await q.query(`CREATE TABLE trace_inbox (
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      row_id uuid NOT NULL,
      seq bigserial NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      data jsonb NOT NULL,
      PRIMARY KEY (dataset_id, row_id)
    )`);
    await q.query('CREATE INDEX trace_inbox_order_idx ON trace_inbox (dataset_id, seq)');
    // How long trace data is kept: a workspace's default (dataset_id NULL) and per-dataset overrides.
    await q.query(`CREATE TABLE trace_retention (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid REFERENCES datasets(id) ON DELETE CASCADE,
      retention_days integer CHECK (retention_days BETWEEN 1 AND 3650),
      updated_by uuid,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(
      `CREATE UNIQUE INDEX trace_retention_target_idx ON trace_retention (workspace_id, COALESCE(dataset_id, '00000000-0000-0000-0000-000000000000'::uuid))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE trace_retention');
    await q.query('DROP TABLE trace_inbox');
    await q.query('DROP TABLE trace_live_streams');
    await q.query(`DELETE FROM trace_ingest_runs WHERE source_kind = 'otlp'`);
    await q.query(`ALTER TABLE trace_ingest_runs DROP CONSTRAINT IF EXISTS trace_ingest_runs_source_kind_check`);
    await q.query(
      `ALTER TABLE trace_ingest_runs ADD CONSTRAINT trace_ingest_runs_source_kind_check CHECK (source_kind IN ('upload', 'inline', 'connection'))`,
    );
  }
}
