import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ciphertexts name the key that sealed them (`key_id`, a fingerprint of the key), so keys can
 * rotate: the previous key still opens old rows until the rotation command re-seals them.
 * Rows sealed before this migration carry '' and open with the current key.
 */
export class SecretKeyId1764000000000 implements MigrationInterface {
  name = 'SecretKeyId1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspace_secrets ADD COLUMN key_id text NOT NULL DEFAULT ''`);
    await q.query('ALTER TABLE workspace_secrets DROP COLUMN key_version');
    await q.query('CREATE INDEX workspace_secrets_key_idx ON workspace_secrets (key_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX workspace_secrets_key_idx');
    await q.query('ALTER TABLE workspace_secrets ADD COLUMN key_version integer NOT NULL DEFAULT 1');
    await q.query('ALTER TABLE workspace_secrets DROP COLUMN key_id');
  }
}
