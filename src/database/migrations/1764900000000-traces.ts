import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trace ingestion. Landed spans are rows of a trace dataset's versions (dataset_rows, one row
 * per span, row id derived from trace and span id so a span lands once); these tables hold the
 * sources, the ingest runs with their counts, every dropped record with its payload, ground
 * truth, per-trace enrichment and trace tags.
 */
export class Traces1764900000000 implements MigrationInterface {
  name = 'Traces1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE dataset_versions DROP CONSTRAINT dataset_versions_source_check');
    await q.query(
      `ALTER TABLE dataset_versions ADD CONSTRAINT dataset_versions_source_check CHECK (source IN ('upload', 'commit', 'generated', 'landed'))`,
    );

    // Span rows in trace order, for topology and enrichment (which read a version trace by trace);
    // partial, so test-case rows never pay for it.
    await q.query(
      `CREATE INDEX dataset_rows_trace_idx ON dataset_rows (dataset_id, (data ->> 'trace_id'), ordinal) INCLUDE (added_in, removed_in) WHERE data ? 'span_id' AND data ? 'trace_id'`,
    );

    await q.query(`CREATE TABLE trace_connections (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('otlp_file_url', 'langfuse', 'phoenix')),
      url text NOT NULL,
      settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      secret_id uuid,
      public_key_secret_id uuid,
      dataset_id uuid REFERENCES datasets(id) ON DELETE SET NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      last_landed_at timestamptz
    )`);
    await q.query('CREATE UNIQUE INDEX trace_connections_name_idx ON trace_connections (workspace_id, lower(name))');

    await q.query(`CREATE TABLE trace_uploads (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      filename text NOT NULL,
      format text NOT NULL,
      size_bytes bigint NOT NULL,
      sha256 text NOT NULL,
      path text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX trace_uploads_workspace_idx ON trace_uploads (workspace_id, created_at)');

    await q.query(`CREATE TABLE trace_ingest_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid REFERENCES datasets(id) ON DELETE SET NULL,
      version_id uuid REFERENCES dataset_versions(id) ON DELETE SET NULL,
      source_kind text NOT NULL CHECK (source_kind IN ('upload', 'inline', 'connection')),
      upload_id uuid REFERENCES trace_uploads(id) ON DELETE SET NULL,
      connection_id uuid REFERENCES trace_connections(id) ON DELETE SET NULL,
      inline_records jsonb,
      options jsonb NOT NULL DEFAULT '{}'::jsonb,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      received integer NOT NULL DEFAULT 0,
      landed integer NOT NULL DEFAULT 0,
      deduplicated integer NOT NULL DEFAULT 0,
      dropped integer NOT NULL DEFAULT 0,
      drop_reasons jsonb NOT NULL DEFAULT '{}'::jsonb,
      conventions jsonb NOT NULL DEFAULT '{}'::jsonb,
      traces integer NOT NULL DEFAULT 0,
      error jsonb,
      job_id uuid,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX trace_ingest_runs_workspace_idx ON trace_ingest_runs (workspace_id, created_at)');

    await q.query(`CREATE TABLE trace_drops (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES trace_ingest_runs(id) ON DELETE CASCADE,
      dataset_id uuid,
      version_id uuid REFERENCES dataset_versions(id) ON DELETE SET NULL,
      ordinal integer NOT NULL,
      reason text NOT NULL,
      detail text NOT NULL,
      source_ref text NOT NULL,
      payload jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX trace_drops_run_idx ON trace_drops (run_id, ordinal)');
    await q.query('CREATE INDEX trace_drops_version_idx ON trace_drops (version_id, run_id, ordinal)');
    await q.query('CREATE INDEX trace_drops_workspace_idx ON trace_drops (workspace_id)');

    await q.query(`CREATE TABLE trace_ground_truth_versions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      number integer NOT NULL,
      message text NOT NULL DEFAULT '',
      items jsonb NOT NULL,
      item_count integer NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (version_id, number)
    )`);
    await q.query('CREATE INDEX trace_ground_truth_workspace_idx ON trace_ground_truth_versions (workspace_id)');

    await q.query(`CREATE TABLE trace_enrichment_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      trigger text NOT NULL CHECK (trigger IN ('landing', 'recompute')),
      prices jsonb,
      traces_total integer NOT NULL DEFAULT 0,
      traces_done integer NOT NULL DEFAULT 0,
      error jsonb,
      job_id uuid,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    await q.query('CREATE INDEX trace_enrichment_runs_version_idx ON trace_enrichment_runs (version_id, created_at)');
    await q.query('CREATE INDEX trace_enrichment_runs_workspace_idx ON trace_enrichment_runs (workspace_id)');

    await q.query(`CREATE TABLE trace_enrichment_results (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      trace_id text NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (version_id, trace_id)
    )`);
    await q.query('CREATE INDEX trace_enrichment_results_workspace_idx ON trace_enrichment_results (workspace_id)');

    await q.query(`CREATE TABLE trace_tags (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      trace_id text NOT NULL,
      tag text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (version_id, trace_id, tag)
    )`);
    await q.query('CREATE INDEX trace_tags_tag_idx ON trace_tags (version_id, tag)');
    await q.query('CREATE INDEX trace_tags_workspace_idx ON trace_tags (workspace_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX dataset_rows_trace_idx');
    for (const table of [
      'trace_tags',
      'trace_enrichment_results',
      'trace_enrichment_runs',
      'trace_ground_truth_versions',
      'trace_drops',
      'trace_ingest_runs',
      'trace_uploads',
      'trace_connections',
    ])
      await q.query(`DROP TABLE ${table}`);
    await q.query(`DELETE FROM dataset_versions WHERE source = 'landed'`);
    await q.query('ALTER TABLE dataset_versions DROP CONSTRAINT dataset_versions_source_check');
    await q.query(
      `ALTER TABLE dataset_versions ADD CONSTRAINT dataset_versions_source_check CHECK (source IN ('upload', 'commit', 'generated'))`,
    );
  }
}
