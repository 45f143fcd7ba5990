import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Reports and their sections, stored exports, report configs, settings and section prompts. */
export class Reports1765100000000 implements MigrationInterface {
  name = 'Reports1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE report_configs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      sections jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX report_configs_name_idx ON report_configs (workspace_id, lower(name))');
    await q.query(`CREATE TABLE reports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      config_id uuid REFERENCES report_configs(id) ON DELETE SET NULL,
      judge_id uuid REFERENCES judges(id) ON DELETE SET NULL,
      baseline_run_id uuid REFERENCES runs(id) ON DELETE SET NULL,
      title text NOT NULL,
      sections jsonb NOT NULL,
      generated_at timestamptz NOT NULL DEFAULT now(),
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE INDEX reports_workspace_idx ON reports (workspace_id, created_at DESC)');
    await q.query('CREATE INDEX reports_run_idx ON reports (run_id)');
    await q.query(`CREATE TABLE report_exports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      report_id uuid NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
      format text NOT NULL CHECK (format IN ('markdown', 'html', 'pdf')),
      filename text NOT NULL,
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      content bytea NOT NULL,
      report_version integer NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    await q.query('CREATE INDEX report_exports_workspace_idx ON report_exports (workspace_id)');
    await q.query('CREATE INDEX report_exports_report_idx ON report_exports (report_id, format, created_at DESC)');
    await q.query(`CREATE TABLE report_settings (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      default_config_id uuid REFERENCES report_configs(id) ON DELETE SET NULL,
      judge_id uuid REFERENCES judges(id) ON DELETE SET NULL,
      formats text[] NOT NULL DEFAULT '{markdown,html,pdf}',
      default_format text NOT NULL DEFAULT 'pdf',
      updated_by uuid,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE report_section_prompts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      section_key text NOT NULL,
      prompt text NOT NULL,
      updated_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(
      'CREATE UNIQUE INDEX report_section_prompts_key_idx ON report_section_prompts (workspace_id, section_key)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['report_section_prompts', 'report_settings', 'report_exports', 'reports', 'report_configs'])
      await q.query(`DROP TABLE ${table}`);
  }
}
