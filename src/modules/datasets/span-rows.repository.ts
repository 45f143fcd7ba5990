import { Injectable } from '@nestjs/common';
import { BulkWriter, type BulkValue } from '../../../libs/database/bulk-writer.js';
import { sql, type Selectable } from 'kysely';
import type { DatasetRows, DatasetVersions } from '../../../libs/database/schema.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { shownIn, visibleIn } from './rows/rows.repository.js';

/** Where a version's span rows are: the visibility test of dataset_rows for version `$2` of dataset `$1`. */
const VISIBLE = `r.dataset_id = $1 AND ${visibleIn('r', '$2')}`;

/** A span row's trace id, over dataset_rows as `r`. */
const TRACE_ID = sql<string>`r.data->>'trace_id'`;

/** A span row as spansByTrace pages through them. */
type SpanOfTrace = Pick<Selectable<DatasetRows>, 'ordinal'> & { data: Record<string, unknown>; trace: string };

/** How many rows a version lost. */
type VersionLoss = Pick<Selectable<DatasetVersions>, 'number'> & { rows: number };

const STAGE_COLUMNS = [
  { name: 'row_id', type: 'uuid' as const },
  { name: 'ordinal', type: 'bigint' as const },
  { name: 'data', type: 'jsonb' as const },
];

/**
 * Rows a caller's own statement yields, to be appended in the same statement: `ctes` are
 * top-level common table expressions over the caller's tables (they may delete what they yield:
 * data-modifying statements in WITH must stand at the top level), `relation` the one of them that
 * yields `row_id`, `data` and `n` (1, 2, … in row order), `params` the parameters they use ($1 on).
 */
export interface RowSource {
  ctes: string;
  relation: string;
  params: unknown[];
}

/** A trace dataset's rows as spans: written in bulk by landings, deleted by retention, read by trace. */
@Injectable()
export class SpanRowsRepository {
  constructor(
    private readonly db: Db,
    private readonly bulk: BulkWriter,
  ) {}

  /**
   * Stages rows ([row_id, ordinal, jsonb text]) by COPY, then writes under version `number` those
   * the dataset does not show yet (in any version still showing them, or written under `number`
   * already), each row id once. Inside the open unit of work (the staging table drops at commit).
   */
  async appendNew(datasetId: string, number: number, rows: BulkValue[][]): Promise<void> {
    if (!rows.length) return;
    await this.db.query(
      'CREATE TEMP TABLE span_stage (row_id uuid NOT NULL, ordinal bigint NOT NULL, data jsonb NOT NULL) ON COMMIT DROP',
    );
    await this.bulk.append('span_stage', STAGE_COLUMNS, [rows]);
    // A lookup per span by primary key (LATERAL … LIMIT 1 keeps it one): as a NOT EXISTS, a
    // dataset whose rows the statistics do not know yet was read whole for every span.
    await this.db.query(
      `INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
       SELECT $1, f.row_id, $2, f.ordinal, f.data
         FROM (SELECT DISTINCT ON (s.row_id) s.row_id, s.ordinal, s.data FROM span_stage s ORDER BY s.row_id, s.ordinal) f
         LEFT JOIN LATERAL (SELECT 1 AS held FROM dataset_rows r WHERE r.dataset_id = $1 AND r.row_id = f.row_id AND r.removed_in IS NULL LIMIT 1) e ON true
        WHERE e.held IS NULL`,
      [datasetId, number],
    );
  }

  /**
   * Appends, in one statement with the caller's `source`, its rows as rows of version `number`
   * (ordinals from `firstOrdinal`); rows the dataset already shows are not written again.
   * Answers how many the source yielded (`taken`) and how many were written (`landed`).
   */
  async appendFrom(
    datasetId: string,
    number: number,
    firstOrdinal: number,
    source: RowSource,
  ): Promise<{ taken: number; landed: number }> {
    const k = source.params.length;
    const [d, n, o] = [`$${k + 1}::uuid`, `$${k + 2}::int`, `$${k + 3}::bigint`];
    const [row] = await this.db.query<Array<{ taken: number; landed: number }>>(
      `WITH ${source.ctes}, written AS (
         INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
         SELECT ${d}, f.row_id, ${n}, ${o} + f.n - 1, f.data FROM ${source.relation} f
          WHERE NOT EXISTS (SELECT 1 FROM dataset_rows r WHERE r.dataset_id = ${d} AND r.row_id = f.row_id AND r.removed_in IS NULL)
         RETURNING 1
       ) SELECT (SELECT count(*) FROM ${source.relation})::int AS taken, (SELECT count(*) FROM written)::int AS landed`,
      [...source.params, datasetId, number, firstOrdinal],
    );
    return row;
  }

  /** Whether the dataset holds any row at all, in any version or none yet (a landing's under its reserved number). */
  async holdsRows(datasetId: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('dataset_rows').select('row_id').where('dataset_id', '=', datasetId).limit(1),
    );
    return rows.length > 0;
  }

  /** Rows written under version `number` (a landing's, before or after its version record exists). */
  async countAddedIn(datasetId: string, number: number): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('dataset_id', '=', datasetId)
        .where('added_in', '=', number),
    );
    return row.n;
  }

  /** Deletes up to `limit` rows written under version `number` (what an abandoned landing wrote); answers how many. */
  async deleteAddedIn(datasetId: string, number: number, limit: number): Promise<number> {
    const [row] = await this.db.query<Array<{ n: number }>>(
      `WITH gone AS (
         DELETE FROM dataset_rows r USING (SELECT row_id FROM dataset_rows WHERE dataset_id = $1 AND added_in = $2 LIMIT $3) g
          WHERE r.dataset_id = $1 AND r.added_in = $2 AND r.row_id = g.row_id RETURNING 1
       ) SELECT count(*)::int AS n FROM gone`,
      [datasetId, number, limit],
    );
    return row.n;
  }

  /**
   * Deletes up to `limit` of a trace dataset's spans that started before `cutoff` (from every
   * version) and answers, per version number, how many rows it lost, so its row count follows.
   */
  async deleteStartedBefore(
    datasetId: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ deleted: number; lost: VersionLoss[] }> {
    const [row] = await this.db.query<Array<{ deleted: number; lost: VersionLoss[] | null }>>(
      `WITH gone AS (
         DELETE FROM dataset_rows r USING (
           SELECT row_id, added_in FROM dataset_rows WHERE dataset_id = $1 AND (data->>'start_time')::timestamptz < $2 LIMIT $3
         ) x WHERE r.dataset_id = $1 AND r.row_id = x.row_id AND r.added_in = x.added_in RETURNING r.added_in, r.removed_in
       ), lost AS (
         SELECT v.number, count(*)::int AS rows FROM dataset_versions v JOIN gone g ON g.added_in <= v.number AND (g.removed_in IS NULL OR g.removed_in > v.number)
          WHERE v.dataset_id = $1 GROUP BY v.number
       ) SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT json_agg(json_build_object('number', number, 'rows', rows)) FROM lost) AS lost`,
      [datasetId, cutoff, limit],
    );
    return { deleted: row.deleted, lost: row.lost ?? [] };
  }

  /** The version's spans (rows), ordered by trace then row order, in pages: what topology and enrichment read (walks dataset_rows_trace_idx). */
  async *spansByTrace(
    datasetId: string,
    versionNumber: number,
    pageSize = 5000,
  ): AsyncGenerator<Array<Record<string, unknown>>> {
    let after: { trace: string; ordinal: string } | null = null;
    for (;;) {
      const rows: SpanOfTrace[] = await this.db.query(
        `SELECT r.data, r.ordinal, r.data ->> 'trace_id' AS trace FROM dataset_rows r
          WHERE ${VISIBLE} AND r.data ? 'span_id' AND r.data ? 'trace_id' ${after ? `AND (r.data ->> 'trace_id', r.ordinal) > ($4, $5::bigint)` : ''}
          ORDER BY r.data ->> 'trace_id', r.ordinal LIMIT $3`,
        after ? [datasetId, versionNumber, pageSize, after.trace, after.ordinal] : [datasetId, versionNumber, pageSize],
      );
      if (!rows.length) return;
      yield rows.map((r) => r.data);
      const last = rows[rows.length - 1];
      after = { trace: last.trace, ordinal: String(last.ordinal) };
      if (rows.length < pageSize) return;
    }
  }

  async countTraces(datasetId: string, versionNumber: number): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(sql<number>`count(DISTINCT r.data->>'trace_id')::int`.as('n'))
        .where('r.dataset_id', '=', datasetId)
        .where(shownIn('r', versionNumber)),
    );
    return row.n;
  }

  /** Which of these trace ids the version holds. */
  async knownTraces(datasetId: string, versionNumber: number, traceIds: string[]): Promise<Set<string>> {
    if (!traceIds.length) return new Set();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(TRACE_ID.as('t'))
        .distinct()
        .where('r.dataset_id', '=', datasetId)
        .where(shownIn('r', versionNumber))
        .where(TRACE_ID, '=', sql<string>`ANY(${traceIds}::text[])`),
    );
    return new Set(rows.map((r) => r.t));
  }
}
