import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * On the embedded database the row index's pending list is kept at PostgreSQL's default size
 * (`gin_pending_list_limit`, 4MB) instead of the 128 MB the index was created with, and a bulk
 * write sets the limit for its own rows (BulkWriter: the first 100,000 rows' merge is left for
 * after the write, the rest is merged 4 MB at a time as it is written). PGlite runs on the
 * service's own thread: merging a 1,000,000-row upload's 115-MB list was one statement that held
 * every request for seconds, and its accumulator grew the engine's WebAssembly memory, which never
 * shrinks (docs/performance.md#dataset-uploads). With the option
 * reset the session's setting decides, which the index's own option would override. PostgreSQL
 * keeps 128 MB: there the merge runs on a connection of its own, and the upload answers sooner
 * for not merging. (An embedded database dumped and restored into PostgreSQL carries the reset;
 * `ALTER INDEX dataset_rows_data_idx SET (gin_pending_list_limit = 131072)` gives it PostgreSQL's.)
 */
export class EmbeddedRowIndexPendingList1766400000000 implements MigrationInterface {
  name = 'EmbeddedRowIndexPendingList1766400000000';

  async up(q: QueryRunner): Promise<void> {
    if (await isEmbedded(q)) await q.query('ALTER INDEX dataset_rows_data_idx RESET (gin_pending_list_limit)');
  }

  async down(q: QueryRunner): Promise<void> {
    if (await isEmbedded(q)) await q.query('ALTER INDEX dataset_rows_data_idx SET (gin_pending_list_limit = 131072)');
  }
}

/** Whether the migration runs on the embedded engine (PGlite names itself in `version()`). */
async function isEmbedded(q: QueryRunner): Promise<boolean> {
  const [{ version }]: Array<{ version: string }> = await q.query('SELECT version()');
  return version.includes('PGlite');
}
