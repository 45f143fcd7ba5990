import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Projects, test plans and their versions, test-package recommendations. */
export class Projects1765000000000 implements MigrationInterface {
  name = 'Projects1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE test_plans (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      latest_version integer NOT NULL DEFAULT 1,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX test_plans_name_idx ON test_plans (workspace_id, lower(name))');
    await q.query('CREATE INDEX test_plans_workspace_idx ON test_plans (workspace_id, updated_at DESC)');

    await q.query(`CREATE TABLE test_plan_versions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      test_plan_id uuid NOT NULL REFERENCES test_plans(id) ON DELETE CASCADE,
      number integer NOT NULL CHECK (number >= 1),
      message text NOT NULL DEFAULT '',
      datasets jsonb NOT NULL DEFAULT '[]'::jsonb,
      metrics jsonb NOT NULL DEFAULT '[]'::jsonb,
      release_rule jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (test_plan_id, number)
    )`);
    await q.query('CREATE INDEX test_plan_versions_workspace_idx ON test_plan_versions (workspace_id)');

    await q.query(`CREATE TABLE projects (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      template text,
      dimensions jsonb NOT NULL DEFAULT '[]'::jsonb,
      sut_ids uuid[] NOT NULL DEFAULT '{}',
      dataset_ids uuid[] NOT NULL DEFAULT '{}',
      test_plan_id uuid REFERENCES test_plans(id) ON DELETE SET NULL,
      test_plan_version integer,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX projects_name_idx ON projects (workspace_id, lower(name))');
    await q.query('CREATE INDEX projects_workspace_idx ON projects (workspace_id, updated_at DESC)');
    await q.query('CREATE INDEX projects_test_plan_idx ON projects (test_plan_id) WHERE test_plan_id IS NOT NULL');

    await q.query(`CREATE TABLE test_package_recommendations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      use_case text NOT NULL,
      description text NOT NULL DEFAULT '',
      metrics jsonb NOT NULL DEFAULT '[]'::jsonb,
      checks text[] NOT NULL DEFAULT '{}',
      dimensions text[] NOT NULL DEFAULT '{}',
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query(
      'CREATE UNIQUE INDEX test_package_recommendations_name_idx ON test_package_recommendations (workspace_id, lower(name))',
    );
    await q.query(
      'CREATE INDEX test_package_recommendations_workspace_idx ON test_package_recommendations (workspace_id, use_case)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE test_package_recommendations');
    await q.query('DROP TABLE projects');
    await q.query('DROP TABLE test_plan_versions');
    await q.query('DROP TABLE test_plans');
  }
}
