import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The datasets family publishes a version's rows as a relational interface, so runs, analysis and
 * SDG read them inside their own statements without naming its tables (docs/architecture.md#what-families-offer-each-other).
 * A single `LANGUAGE sql STABLE` SELECT, neither STRICT nor SECURITY DEFINER: PostgreSQL inlines
 * it into the caller's query, so the plan is the one the tables would give (the visibility test on
 * dataset_rows_order_idx, the dimensions computed only for the rows a caller reads them of).
 * Columns: what the row selections the datasets family compiles refer to (`r.dataset_id`,
 * `r.row_id`, `r.data`), the order, and the row's dimension values as one object.
 */
export class DatasetPublishedRows1766100000000 implements MigrationInterface {
  name = 'DatasetPublishedRows1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION dataset_version_rows(dataset uuid, version integer)
      RETURNS TABLE (dataset_id uuid, row_id uuid, ordinal bigint, data jsonb, dimensions jsonb)
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT r.dataset_id, r.row_id, r.ordinal, r.data,
               (SELECT coalesce(jsonb_object_agg(d.dimension, d.value), '{}'::jsonb) FROM dataset_row_dimensions d
                 WHERE d.dataset_id = r.dataset_id AND d.row_id = r.row_id)
          FROM dataset_rows r
         WHERE r.dataset_id = $1 AND r.added_in <= $2 AND (r.removed_in IS NULL OR r.removed_in > $2)
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION dataset_version_rows(uuid, integer)');
  }
}
