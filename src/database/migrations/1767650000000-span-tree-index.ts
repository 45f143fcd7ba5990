import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A trace's spans by parent: the children of one span (and how many each has) are an index range,
 * so a 20,000-span trace is read back a page of children at a time without reading the whole
 * trace per page. Partial like dataset_rows_trace_idx, so test-case rows never pay for it.
 */
export class SpanTreeIndex1767650000000 implements MigrationInterface {
  name = 'SpanTreeIndex1767650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX dataset_rows_span_parent_idx ON dataset_rows (dataset_id, (data ->> 'trace_id'), (data ->> 'parent_span_id'), (data ->> 'span_id')) INCLUDE (added_in, removed_in) WHERE data ? 'span_id' AND data ? 'trace_id'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX dataset_rows_span_parent_idx');
  }
}
