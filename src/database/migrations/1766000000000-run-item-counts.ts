import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /runs/{id} counts a run's items by status (docs/runs.md#memory): the pending and errored
 * ones from an index that holds only them, the answered ones as the run's total less those. A
 * finished run's count then reads a handful of entries instead of every item.
 */
export class RunItemCounts1766000000000 implements MigrationInterface {
  name = 'RunItemCounts1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX run_items_unanswered_idx ON run_items (run_id, status) WHERE status <> 'done'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX run_items_unanswered_idx');
  }
}
