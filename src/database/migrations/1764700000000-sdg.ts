import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Synthetic data generation: adapters (templates or an LLM through a judge) and their runs, which add generated candidate versions. */
export class Sdg1764700000000 implements MigrationInterface {
  name = 'Sdg1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE sdg_adapters (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      kind text NOT NULL CHECK (kind IN ('template', 'llm')),
      spec jsonb NOT NULL,
      judge_id uuid REFERENCES judges(id) ON DELETE RESTRICT,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX sdg_adapters_name_idx ON sdg_adapters (workspace_id, lower(name))');
    await q.query(`CREATE TABLE sdg_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      adapter_id uuid NOT NULL REFERENCES sdg_adapters(id) ON DELETE CASCADE,
      target_dataset_id uuid NOT NULL,
      state text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
      state_reason text,
      params jsonb NOT NULL,
      generated integer NOT NULL DEFAULT 0,
      dropped integer NOT NULL DEFAULT 0,
      errors jsonb NOT NULL DEFAULT '[]'::jsonb,
      version_id uuid,
      job_id uuid,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`);
    await q.query('CREATE INDEX sdg_runs_adapter_idx ON sdg_runs (adapter_id, created_at DESC)');
    await q.query('ALTER TABLE dataset_versions DROP CONSTRAINT dataset_versions_source_check');
    await q.query(
      `ALTER TABLE dataset_versions ADD CONSTRAINT dataset_versions_source_check CHECK (source IN ('upload', 'commit', 'generated'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE dataset_versions DROP CONSTRAINT dataset_versions_source_check');
    await q.query(
      `ALTER TABLE dataset_versions ADD CONSTRAINT dataset_versions_source_check CHECK (source IN ('upload', 'commit'))`,
    );
    await q.query('DROP TABLE sdg_runs');
    await q.query('DROP TABLE sdg_adapters');
  }
}
