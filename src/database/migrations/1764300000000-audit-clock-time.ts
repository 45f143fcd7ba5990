import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Audit entries take the wall-clock time of their insert, not their transaction's start: two
 * entries of one transaction (a dataset created, then its first version) keep their order when
 * listed newest first.
 */
export class AuditClockTime1764300000000 implements MigrationInterface {
  name = 'AuditClockTime1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE audit_events ALTER COLUMN created_at SET DEFAULT clock_timestamp()');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE audit_events ALTER COLUMN created_at SET DEFAULT now()');
  }
}
