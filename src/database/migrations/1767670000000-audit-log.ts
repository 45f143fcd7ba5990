import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The workspace audit log: the indexes its filters read by, newest first with the event id as the
 * tie-break of the cursor (the workspace's events, by actor, by action or its prefix, by target,
 * and by age alone for the retention sweep), and `audit_retention`, how long a workspace keeps its
 * events (without a row, AUDIT_RETENTION_DAYS applies).
 */
export class AuditLog1767670000000 implements MigrationInterface {
  name = 'AuditLog1767670000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX audit_events_workspace_idx');
    await q.query('CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, created_at, id)');
    await q.query('CREATE INDEX audit_events_actor_idx ON audit_events (workspace_id, actor_id, created_at, id)');
    // text_pattern_ops: an action prefix (`member.`) is a LIKE 'member.%' range on the index.
    await q.query(
      'CREATE INDEX audit_events_action_idx ON audit_events (workspace_id, action text_pattern_ops, created_at)',
    );
    await q.query('CREATE INDEX audit_events_created_idx ON audit_events (created_at)');
    await q.query(`CREATE TABLE audit_retention (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      retention_days integer NOT NULL CHECK (retention_days BETWEEN 1 AND 36500),
      updated_by uuid,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audit_retention');
    for (const index of ['created', 'action', 'actor', 'workspace'])
      await q.query(`DROP INDEX audit_events_${index}_idx`);
    await q.query('CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, created_at)');
  }
}
