import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs in the order they were enqueued: `seq` numbers them. `created_at` alone cannot say which
 * of two jobs is newer when both were enqueued within the clock's resolution (the embedded
 * database's clock ticks in milliseconds), so "the latest job for a record", newest-first lists
 * and the claim order break ties by `seq`. Existing jobs are numbered in creation order.
 */
export class JobOrder1765700000000 implements MigrationInterface {
  name = 'JobOrder1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE jobs ADD COLUMN seq bigint');
    await q.query(
      'UPDATE jobs SET seq = ordered.n FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM jobs) ordered WHERE jobs.id = ordered.id',
    );
    await q.query('CREATE SEQUENCE jobs_seq_seq OWNED BY jobs.seq');
    await q.query(`SELECT setval('jobs_seq_seq', coalesce((SELECT max(seq) FROM jobs), 0) + 1, false)`);
    await q.query(
      `ALTER TABLE jobs ALTER COLUMN seq SET DEFAULT nextval('jobs_seq_seq'), ALTER COLUMN seq SET NOT NULL`,
    );
    await q.query('CREATE INDEX jobs_target_seq_idx ON jobs (target_type, target_id, seq)');
    await q.query('DROP INDEX jobs_claim_idx');
    await q.query(`CREATE INDEX jobs_claim_idx ON jobs (priority DESC, run_after, seq) WHERE status = 'queued'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX jobs_claim_idx');
    await q.query(`CREATE INDEX jobs_claim_idx ON jobs (priority DESC, run_after, created_at) WHERE status = 'queued'`);
    await q.query('DROP INDEX jobs_target_seq_idx');
    await q.query('ALTER TABLE jobs DROP COLUMN seq');
  }
}
