import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Outbound webhooks of a workspace: where, for which events, signed with which workspace secret. */
export class NotificationConfigs1764400000000 implements MigrationInterface {
  name = 'NotificationConfigs1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE notification_configs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      url text NOT NULL,
      events text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      secret_id uuid NOT NULL REFERENCES workspace_secrets(id) ON DELETE RESTRICT,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query(
      'CREATE UNIQUE INDEX notification_configs_name_idx ON notification_configs (workspace_id, lower(name))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE notification_configs');
  }
}
