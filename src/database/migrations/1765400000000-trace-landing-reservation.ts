import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trace landings in bounded transactions (docs/traces.md#how-a-file-lands): a landing reserves
 * the dataset's next version number (`datasets.writing_version`) and writes its spans under that
 * number batch by batch, each batch committed on its own; the version record is made, and the
 * rows become readable, only at the end. The run keeps its number and the first ordinal of its
 * spans, so a retry after a crash goes on with the same ones.
 */
export class TraceLandingReservation1765400000000 implements MigrationInterface {
  name = 'TraceLandingReservation1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE datasets ADD COLUMN writing_version integer');
    await q.query('ALTER TABLE trace_ingest_runs ADD COLUMN version_number integer, ADD COLUMN ordinal_base bigint');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE trace_ingest_runs DROP COLUMN version_number, DROP COLUMN ordinal_base');
    await q.query('ALTER TABLE datasets DROP COLUMN writing_version');
  }
}
