import type { MigrationInterface, QueryRunner } from 'typeorm';

/** API keys: a workspace's machine credentials, stored as SHA-256 hashes and found by prefix. */
export class ApiKeys1765200000000 implements MigrationInterface {
  name = 'ApiKeys1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL UNIQUE,
      secret_hash text NOT NULL,
      role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
      expires_at timestamptz,
      last_used_at timestamptz,
      last_used_ip text,
      revoked_at timestamptz,
      revoked_by uuid REFERENCES users(id) ON DELETE SET NULL,
      revoked_reason text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at DESC)');
    await q.query('CREATE INDEX api_keys_user_idx ON api_keys (user_id) WHERE revoked_at IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE api_keys');
  }
}
