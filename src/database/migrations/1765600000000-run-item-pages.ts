import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs executed in pages (docs/runs.md#memory): a run's items are read in keyset pages by
 * (ordinal, row_id, repetition), a unique order (ordinal and repetition alone need not be), and a
 * conversation's turns are found by session. The old (run_id, ordinal, repetition) index is a
 * prefix of the new one's order and goes.
 */
export class RunItemPages1765600000000 implements MigrationInterface {
  name = 'RunItemPages1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX run_items_page_idx ON run_items (run_id, ordinal, row_id, repetition)');
    await q.query('DROP INDEX run_items_order_idx');
    await q.query(
      'CREATE INDEX run_items_session_idx ON run_items (run_id, session_id, repetition, turn) WHERE session_id IS NOT NULL',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX run_items_session_idx');
    await q.query('CREATE INDEX run_items_order_idx ON run_items (run_id, ordinal, repetition)');
    await q.query('DROP INDEX run_items_page_idx');
  }
}
