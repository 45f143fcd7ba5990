import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs: a running job's cancellation is a request its worker sees (cancel_requested_at), and
 * families list their jobs by workspace and status for queue views.
 */
export class JobCancellation1763900000000 implements MigrationInterface {
  name = 'JobCancellation1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE jobs ADD COLUMN cancel_requested_at timestamptz');
    await q.query('CREATE INDEX jobs_workspace_status_idx ON jobs (workspace_id, status, created_at)');
    await q.query('CREATE INDEX jobs_type_status_idx ON jobs (type, status, created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS jobs_type_status_idx');
    await q.query('DROP INDEX IF EXISTS jobs_workspace_status_idx');
    await q.query('ALTER TABLE jobs DROP COLUMN IF EXISTS cancel_requested_at');
  }
}
