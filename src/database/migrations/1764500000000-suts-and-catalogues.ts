import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a run is made of: systems under test with their connections and adapter revisions,
 * judges, versioned metric configs with the workspace's pinned defaults, eval configs, and the
 * operation registry with the custom ops (deployments) that serve registered ops.
 */
export class SutsAndCatalogues1764500000000 implements MigrationInterface {
  name = 'SutsAndCatalogues1764500000000';

  async up(q: QueryRunner): Promise<void> {
    const record = `id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE`;
    const stamps = `created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1`;
    await q.query(`CREATE TABLE suts (${record},
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      tags text[] NOT NULL DEFAULT '{}',
      ${stamps})`);
    await q.query('CREATE UNIQUE INDEX suts_name_idx ON suts (workspace_id, lower(name))');

    await q.query(`CREATE TABLE sut_connections (${record},
      sut_id uuid NOT NULL REFERENCES suts(id) ON DELETE CASCADE,
      name text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('http', 'openai_chat', 'offline')),
      transport jsonb,
      auth jsonb,
      secret_id uuid REFERENCES workspace_secrets(id) ON DELETE RESTRICT,
      limits jsonb NOT NULL,
      ${stamps})`);
    await q.query('CREATE UNIQUE INDEX sut_connections_name_idx ON sut_connections (sut_id, lower(name))');
    await q.query('CREATE INDEX sut_connections_workspace_idx ON sut_connections (workspace_id)');

    await q.query(`CREATE TABLE sut_adapters (${record},
      connection_id uuid NOT NULL REFERENCES sut_connections(id) ON DELETE CASCADE,
      revision integer NOT NULL,
      spec jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (connection_id, revision))`);

    await q.query(`CREATE TABLE judges (${record},
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      provider text NOT NULL CHECK (provider IN ('openai_compatible', 'azure_openai', 'anthropic')),
      base_url text NOT NULL,
      model text NOT NULL,
      api_version text,
      parameters jsonb NOT NULL DEFAULT '{}',
      json_mode boolean NOT NULL DEFAULT true,
      timeout_ms integer NOT NULL,
      max_attempts integer NOT NULL,
      max_concurrency integer NOT NULL,
      secret_id uuid REFERENCES workspace_secrets(id) ON DELETE RESTRICT,
      ${stamps})`);
    await q.query('CREATE UNIQUE INDEX judges_name_idx ON judges (workspace_id, lower(name))');

    await q.query(`CREATE TABLE metric_configs (${record},
      name text NOT NULL,
      config_version integer NOT NULL,
      description text NOT NULL DEFAULT '',
      kind text NOT NULL CHECK (kind IN ('deterministic', 'judged', 'custom')),
      metric text NOT NULL,
      params jsonb NOT NULL DEFAULT '{}',
      threshold double precision,
      judged jsonb,
      judge_id uuid REFERENCES judges(id) ON DELETE RESTRICT,
      first_used_at timestamptz,
      first_used_by_run uuid,
      ${stamps})`);
    await q.query(
      'CREATE UNIQUE INDEX metric_configs_name_version_idx ON metric_configs (workspace_id, lower(name), config_version)',
    );

    await q.query(`CREATE TABLE metric_config_defaults (${record},
      metric_name text NOT NULL,
      revision integer NOT NULL,
      config_name text,
      config_version integer,
      note text NOT NULL DEFAULT '',
      set_by uuid,
      set_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await q.query(
      'CREATE UNIQUE INDEX metric_config_defaults_revision_idx ON metric_config_defaults (workspace_id, lower(metric_name), revision)',
    );

    await q.query(`CREATE TABLE eval_configs (${record},
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      metrics jsonb NOT NULL,
      default_judge_id uuid REFERENCES judges(id) ON DELETE RESTRICT,
      pass_rule jsonb NOT NULL,
      ${stamps})`);
    await q.query('CREATE UNIQUE INDEX eval_configs_name_idx ON eval_configs (workspace_id, lower(name))');

    await q.query(`CREATE TABLE custom_ops (${record},
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      state text NOT NULL CHECK (state IN ('deploying', 'active', 'failed', 'stopped')),
      state_reason text,
      revision integer NOT NULL,
      endpoint_url text NOT NULL,
      health_url text NOT NULL,
      timeout_ms integer NOT NULL,
      secret_id uuid REFERENCES workspace_secrets(id) ON DELETE RESTRICT,
      last_checked_at timestamptz,
      ${stamps})`);
    await q.query('CREATE UNIQUE INDEX custom_ops_name_idx ON custom_ops (workspace_id, lower(name))');

    await q.query(`CREATE TABLE custom_op_revisions (${record},
      custom_op_id uuid NOT NULL REFERENCES custom_ops(id) ON DELETE CASCADE,
      revision integer NOT NULL,
      endpoint_url text NOT NULL,
      health_url text NOT NULL,
      timeout_ms integer NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('deploying', 'active', 'failed', 'superseded')),
      reason text,
      health jsonb,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      checked_at timestamptz,
      UNIQUE (custom_op_id, revision))`);

    await q.query(`CREATE TABLE registry_ops (${record},
      name text NOT NULL,
      op_version integer NOT NULL,
      kind text NOT NULL CHECK (kind IN ('metric', 'check', 'enrichment', 'transform')),
      description text NOT NULL DEFAULT '',
      params_schema jsonb NOT NULL,
      custom_op_id uuid NOT NULL REFERENCES custom_ops(id) ON DELETE CASCADE,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await q.query(
      'CREATE UNIQUE INDEX registry_ops_name_version_idx ON registry_ops (workspace_id, lower(name), op_version)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'registry_ops',
      'custom_op_revisions',
      'custom_ops',
      'eval_configs',
      'metric_config_defaults',
      'metric_configs',
      'judges',
      'sut_adapters',
      'sut_connections',
      'suts',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
