import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Datasets and their immutable versions. Rows are stored once per change, not once per version:
 * a row record is visible in versions `added_in <= n < removed_in` (removed_in NULL: still
 * there), so a commit writes only what it changes and every version stays readable.
 */
export class Datasets1764100000000 implements MigrationInterface {
  name = 'Datasets1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE datasets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      kind text NOT NULL DEFAULT 'rows' CHECK (kind IN ('rows', 'traces')),
      tags text[] NOT NULL DEFAULT '{}',
      current_version_id uuid,
      latest_version integer NOT NULL DEFAULT 0,
      next_ordinal bigint NOT NULL DEFAULT 0,
      created_by uuid,
      updated_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX datasets_name_idx ON datasets (workspace_id, lower(name))');
    await q.query('CREATE INDEX datasets_workspace_idx ON datasets (workspace_id, created_at)');

    await q.query(`CREATE TABLE dataset_versions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      number integer NOT NULL,
      state text NOT NULL DEFAULT 'candidate' CHECK (state IN ('candidate', 'current', 'retired')),
      message text NOT NULL DEFAULT '',
      source text NOT NULL CHECK (source IN ('upload', 'commit')),
      parent_version_id uuid REFERENCES dataset_versions(id) ON DELETE SET NULL,
      row_count integer NOT NULL DEFAULT 0,
      columns jsonb NOT NULL DEFAULT '[]'::jsonb,
      mapping jsonb NOT NULL DEFAULT '{}'::jsonb,
      content_sha256 text NOT NULL DEFAULT '',
      upload jsonb,
      changes jsonb,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      promoted_at timestamptz,
      retired_at timestamptz,
      version integer NOT NULL DEFAULT 1,
      UNIQUE (dataset_id, number)
    )`);
    await q.query(
      `CREATE UNIQUE INDEX dataset_versions_one_current_idx ON dataset_versions (dataset_id) WHERE state = 'current'`,
    );
    await q.query(
      'ALTER TABLE datasets ADD CONSTRAINT datasets_current_version_fk FOREIGN KEY (current_version_id) REFERENCES dataset_versions(id) ON DELETE SET NULL',
    );

    // No foreign key on dataset_id: its per-row check costs bulk loads a fifth of their time.
    // The rows of a deleted dataset (directly or with its workspace) go with it by trigger.
    await q.query(`CREATE TABLE dataset_rows (
      dataset_id uuid NOT NULL,
      row_id uuid NOT NULL,
      added_in integer NOT NULL,
      removed_in integer,
      ordinal bigint NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (dataset_id, row_id, added_in)
    )`);
    // Paging in row order within a dataset; the visibility test is evaluated on the index tuples.
    await q.query(
      'CREATE INDEX dataset_rows_order_idx ON dataset_rows (dataset_id, ordinal) INCLUDE (added_in, removed_in)',
    );
    // Equality and `in` predicates of the query language compile to @> containment. New entries
    // go to the index's pending list (up to 128 MB) and are merged by (auto)vacuum, not row by row
    // during an upload: loads run twice as fast, and queries read the pending list meanwhile.
    await q.query(
      'CREATE INDEX dataset_rows_data_idx ON dataset_rows USING gin (data jsonb_path_ops) WITH (fastupdate = on, gin_pending_list_limit = 131072)',
    );
    await q.query(`CREATE FUNCTION dataset_rows_cleanup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM dataset_rows WHERE dataset_id = OLD.id;
        RETURN OLD;
      END $$`);
    await q.query(
      'CREATE TRIGGER datasets_delete_rows AFTER DELETE ON datasets FOR EACH ROW EXECUTE FUNCTION dataset_rows_cleanup()',
    );

    await q.query(`CREATE TABLE dataset_staged_edits (
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      row_id uuid NOT NULL,
      op text NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
      data jsonb,
      base_version integer NOT NULL,
      staged_by uuid,
      staged_by_email text,
      staged_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (dataset_id, row_id)
    )`);

    await q.query(`CREATE TABLE dataset_dimensions (
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      "values" text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (dataset_id, name)
    )`);
    await q.query(`CREATE TABLE dataset_row_dimensions (
      dataset_id uuid NOT NULL,
      row_id uuid NOT NULL,
      dimension text NOT NULL,
      value text NOT NULL,
      assigned_by uuid,
      assigned_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (dataset_id, row_id, dimension),
      FOREIGN KEY (dataset_id, dimension) REFERENCES dataset_dimensions(dataset_id, name) ON DELETE CASCADE
    )`);
    await q.query(
      'CREATE INDEX dataset_row_dimensions_value_idx ON dataset_row_dimensions (dataset_id, dimension, value)',
    );

    await q.query(`CREATE TABLE dataset_partitions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      level text NOT NULL DEFAULT 'session' CHECK (level IN ('session', 'trace', 'span')),
      dimension_values jsonb NOT NULL DEFAULT '{}'::jsonb,
      filter jsonb,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE UNIQUE INDEX dataset_partitions_name_idx ON dataset_partitions (version_id, lower(name))');

    await q.query(`CREATE TABLE data_operation_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
      kind text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),
      params jsonb NOT NULL DEFAULT '{}'::jsonb,
      verdict text,
      result jsonb,
      error text,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`);
    await q.query('CREATE INDEX data_operation_runs_version_idx ON data_operation_runs (version_id, kind, created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER datasets_delete_rows ON datasets');
    await q.query('DROP FUNCTION dataset_rows_cleanup()');
    for (const table of [
      'data_operation_runs',
      'dataset_partitions',
      'dataset_row_dimensions',
      'dataset_dimensions',
      'dataset_staged_edits',
      'dataset_rows',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query('ALTER TABLE datasets DROP CONSTRAINT datasets_current_version_fk');
    await q.query('DROP TABLE dataset_versions');
    await q.query('DROP TABLE datasets');
  }
}
