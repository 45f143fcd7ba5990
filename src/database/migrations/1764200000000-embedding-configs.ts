import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Remote embedding configurations of a workspace (the built-in local embedder needs no row).
 * A config's API key is a workspace secret: deleting a secret a config uses is refused.
 */
export class EmbeddingConfigs1764200000000 implements MigrationInterface {
  name = 'EmbeddingConfigs1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE embedding_configs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      provider text NOT NULL CHECK (provider IN ('openai_compatible', 'azure_openai')),
      base_url text NOT NULL,
      model text NOT NULL,
      dimensions integer,
      batch_size integer NOT NULL DEFAULT 64,
      secret_id uuid REFERENCES workspace_secrets(id) ON DELETE RESTRICT,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE UNIQUE INDEX embedding_configs_name_idx ON embedding_configs (workspace_id, lower(name))');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE embedding_configs');
  }
}
