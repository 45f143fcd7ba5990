import { Injectable } from '@nestjs/common';
import { BulkWriter, type BulkValue } from '../../../libs/database/bulk-writer.js';
import type { ColumnStats } from './entities/dataset-version.entity.js';
import { columnStats } from './ingest/column-stats.js';
import { Db } from '../../../libs/database/unit-of-work.js';

/** SQL that keeps the row records of version `$n` of alias `r`: added at or before n, not yet removed at n. */
export function visibleIn(alias: string, placeholder: string): string {
  return `${alias}.added_in <= ${placeholder} AND (${alias}.removed_in IS NULL OR ${alias}.removed_in > ${placeholder})`;
}

export interface StoredRow {
  row_id: string;
  ordinal: number;
  data: Record<string, unknown>;
}

export interface StagedEdit {
  row_id: string;
  op: 'insert' | 'update' | 'delete';
  data: Record<string, unknown> | null;
  base_version: number;
  staged_by: string | null;
  staged_by_email: string | null;
  staged_at: Date;
}

export interface RowPageRequest {
  datasetId: string;
  version: number;
  /** SQL boolean over alias `r` (from the filter compiler), with its parameters starting at $3. */
  where?: string;
  /** How many of `params` the `where` clause uses (the rest belong to the order and projection). */
  whereParams?: number;
  /** SQL select expression of the returned data over alias `r` (projection), default `r.data`. */
  dataExpr?: string;
  orderBy?: string;
  params: unknown[];
  limit: number;
  offset: number;
  withTotal: boolean;
  /** Keyset paging in row order: only rows after this ordinal (instead of skipping `offset` rows). */
  afterOrdinal?: number;
  /** Count at most this many matching rows; `capped` says when more match. */
  countLimit?: number;
}

/**
 * The rows of dataset versions, in raw SQL: bulk appends, version statistics, staged edits and
 * paging. A row record is visible in versions [added_in, removed_in).
 */
@Injectable()
export class RowsRepository {
  constructor(
    private readonly db: Db,
    private readonly bulk: BulkWriter,
  ) {}

  private q() {
    return this.db.manager;
  }

  /** Appends row records `[row_id, ordinal, data-json]` added in `version`. */
  append(datasetId: string, version: number, batches: AsyncIterable<Array<[string, number, string]>>): Promise<number> {
    async function* withKeys(): AsyncGenerator<BulkValue[][]> {
      for await (const batch of batches)
        yield batch.map(([rowId, ordinal, json]) => [datasetId, rowId, version, ordinal, json]);
    }
    return this.bulk.append(
      'dataset_rows',
      [
        { name: 'dataset_id', type: 'uuid' },
        { name: 'row_id', type: 'uuid' },
        { name: 'added_in', type: 'integer' },
        { name: 'ordinal', type: 'bigint' },
        { name: 'data', type: 'jsonb' },
      ],
      withKeys(),
    );
  }

  /** Merges the GIN index's pending list into the index, then refreshes the planner's statistics; answers the pages merged. */
  async mergePendingIndex(): Promise<number> {
    const [row]: Array<{ merged: string | number }> = await this.db.query(
      "SELECT gin_clean_pending_list('dataset_rows_data_idx') AS merged",
    );
    await this.db.query('ANALYZE dataset_rows');
    return Number(row.merged);
  }

  /** Closes every row still open, at `version` (an upload replacing the dataset's content). */
  async closeAll(datasetId: string, version: number): Promise<void> {
    await this.db.query('UPDATE dataset_rows SET removed_in = $2 WHERE dataset_id = $1 AND removed_in IS NULL', [
      datasetId,
      version,
    ]);
  }

  /** Row count and content hash of a version: SHA-256 over `row_id data` lines in row order (jsonb text, so key order does not matter). */
  async contentHash(datasetId: string, version: number): Promise<{ rowCount: number; sha256: string }> {
    const [summary]: Array<{ n: number; sha: string }> = await this.db.query(
      `SELECT count(*)::int AS n,
              encode(sha256(convert_to(coalesce(string_agg(r.row_id::text || ' ' || r.data::text, E'\\n' ORDER BY r.ordinal), ''), 'UTF8')), 'hex') AS sha
         FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')}`,
      [datasetId, version],
    );
    return { rowCount: summary.n, sha256: summary.sha };
  }

  /** Per-column statistics of a version, in `columnOrder` then any other column (commits; uploads gather them while parsing). */
  async versionStats(
    datasetId: string,
    version: number,
    columnOrder: string[],
    rowCount: number,
  ): Promise<ColumnStats[]> {
    const stats: Array<Record<string, string | number | null> & { key: string }> = await this.db.query(
      `SELECT e.key,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'string')::int AS string,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'number' AND (e.value #>> '{}') ~ '^-?[0-9]+$')::int AS integer,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'number' AND (e.value #>> '{}') !~ '^-?[0-9]+$')::int AS number,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'boolean')::int AS boolean,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'object')::int AS object,
              count(*) FILTER (WHERE jsonb_typeof(e.value) = 'array')::int AS array,
              min((e.value #>> '{}')::float8) FILTER (WHERE jsonb_typeof(e.value) = 'number') AS min,
              max((e.value #>> '{}')::float8) FILTER (WHERE jsonb_typeof(e.value) = 'number') AS max,
              min(length(e.value #>> '{}')) FILTER (WHERE jsonb_typeof(e.value) = 'string') AS min_length,
              max(length(e.value #>> '{}')) FILTER (WHERE jsonb_typeof(e.value) = 'string') AS max_length,
              avg(length(e.value #>> '{}')) FILTER (WHERE jsonb_typeof(e.value) = 'string')::float8 AS mean_length
         FROM dataset_rows r CROSS JOIN LATERAL jsonb_each(r.data) e
        WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND jsonb_typeof(r.data) = 'object'
        GROUP BY e.key`,
      [datasetId, version],
    );
    const distinct = await this.distinctCounts(datasetId, version);
    const byKey = new Map(stats.map((s) => [s.key, s]));
    const order = [
      ...columnOrder.filter((c) => byKey.has(c)),
      ...[...byKey.keys()].filter((k) => !columnOrder.includes(k)).sort(),
    ];
    const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
    return order.map((name) => {
      const s = byKey.get(name)!;
      return columnStats(name, s as unknown as Record<string, number>, rowCount, {
        distinct: distinct[name] ?? 0,
        min: num(s.min),
        max: num(s.max),
        minLength: num(s.min_length),
        maxLength: num(s.max_length),
        meanLength: num(s.mean_length),
      });
    });
  }

  /** Distinct non-null values per column (of `only`, or of every column), by hash aggregation. */
  async distinctCounts(datasetId: string, version: number, only?: string[]): Promise<Record<string, number>> {
    const rows: Array<{ key: string; n: number }> = await this.db.query(
      `SELECT s.key, count(*)::int AS n FROM (
         SELECT e.key, e.value FROM dataset_rows r CROSS JOIN LATERAL jsonb_each(r.data) e
          WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND jsonb_typeof(e.value) <> 'null' ${only ? 'AND e.key = ANY($3::text[])' : ''}
          GROUP BY e.key, e.value
       ) s GROUP BY s.key`,
      only ? [datasetId, version, only] : [datasetId, version],
    );
    return Object.fromEntries(rows.map((r) => [r.key, r.n]));
  }

  /** The ids among `rowIds` that are rows of the version. */
  async existing(datasetId: string, version: number, rowIds: string[]): Promise<Set<string>> {
    if (!rowIds.length) return new Set();
    const rows: Array<{ row_id: string }> = await this.q().query(
      `SELECT r.row_id FROM dataset_rows r WHERE r.dataset_id = $1 AND r.row_id = ANY($3::uuid[]) AND ${visibleIn('r', '$2')}`,
      [datasetId, version, rowIds],
    );
    return new Set(rows.map((r) => r.row_id));
  }

  async byIds(datasetId: string, version: number, rowIds: string[]): Promise<Map<string, StoredRow>> {
    if (!rowIds.length) return new Map();
    const rows: StoredRow[] = await this.q().query(
      `SELECT r.row_id, r.ordinal::float8 AS ordinal, r.data FROM dataset_rows r
        WHERE r.dataset_id = $1 AND r.row_id = ANY($3::uuid[]) AND ${visibleIn('r', '$2')}`,
      [datasetId, version, rowIds],
    );
    return new Map(rows.map((r) => [r.row_id, r]));
  }

  /** One page of a version's rows: filtered, ordered (row order last), projected; the total counted up to a limit. */
  async page(req: RowPageRequest): Promise<{ rows: StoredRow[]; total?: number; capped?: boolean }> {
    const where = `r.dataset_id = $1 AND ${visibleIn('r', '$2')}${req.where ? ` AND (${req.where})` : ''}`;
    const params = [req.datasetId, req.version, ...req.params];
    const order = [req.orderBy, 'r.ordinal'].filter(Boolean).join(', ');
    const after = req.afterOrdinal !== undefined ? ` AND r.ordinal > ${Number(req.afterOrdinal)}` : '';
    const rows: StoredRow[] = await this.q().query(
      `SELECT r.row_id, r.ordinal::float8 AS ordinal, ${req.dataExpr ?? 'r.data'} AS data FROM dataset_rows r
        WHERE ${where}${after} ORDER BY ${order} LIMIT ${Number(req.limit)} OFFSET ${req.afterOrdinal !== undefined ? 0 : Number(req.offset)}`,
      params,
    );
    if (!req.withTotal) return { rows };
    const countParams = params.slice(0, 2 + (req.whereParams ?? req.params.length));
    const cap = req.countLimit;
    const [{ n }]: Array<{ n: number }> = await this.q().query(
      cap
        ? `SELECT count(*)::int AS n FROM (SELECT 1 FROM dataset_rows r WHERE ${where} LIMIT ${Number(cap) + 1}) s`
        : `SELECT count(*)::int AS n FROM dataset_rows r WHERE ${where}`,
      countParams,
    );
    return { rows, total: cap ? Math.min(n, cap) : n, capped: cap ? n > cap : false };
  }

  /** Every row of a version in order, a batch at a time (keyset paging on the ordinal): memory stays bounded. */
  async *stream(datasetId: string, version: number, batchSize = 2000): AsyncGenerator<StoredRow[]> {
    let after = -1;
    for (;;) {
      const rows: StoredRow[] = await this.db.query(
        `SELECT r.row_id, r.ordinal::float8 AS ordinal, r.data FROM dataset_rows r
          WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND r.ordinal > $3 ORDER BY r.ordinal LIMIT $4`,
        [datasetId, version, after, batchSize],
      );
      if (!rows.length) return;
      yield rows;
      after = rows[rows.length - 1].ordinal;
      if (rows.length < batchSize) return;
    }
  }

  // Staged edits

  async staged(datasetId: string): Promise<StagedEdit[]> {
    return this.q().query(
      'SELECT row_id, op, data, base_version, staged_by, staged_by_email, staged_at FROM dataset_staged_edits WHERE dataset_id = $1 ORDER BY staged_at, row_id',
      [datasetId],
    );
  }

  async stagedFor(datasetId: string, rowIds: string[]): Promise<Map<string, StagedEdit>> {
    if (!rowIds.length) return new Map();
    const rows: StagedEdit[] = await this.db.query(
      'SELECT row_id, op, data, base_version, staged_by, staged_by_email, staged_at FROM dataset_staged_edits WHERE dataset_id = $1 AND row_id = ANY($2::uuid[]) FOR UPDATE',
      [datasetId, rowIds],
    );
    return new Map(rows.map((r) => [r.row_id, r]));
  }

  async stageMany(
    datasetId: string,
    edits: Array<Pick<StagedEdit, 'row_id' | 'op' | 'data' | 'base_version' | 'staged_by' | 'staged_by_email'>>,
  ): Promise<void> {
    if (!edits.length) return;
    await this.db.query(
      `INSERT INTO dataset_staged_edits (dataset_id, row_id, op, data, base_version, staged_by, staged_by_email)
       SELECT $1, e.row_id, e.op, e.data, e.base_version, e.staged_by, e.staged_by_email
         FROM unnest($2::uuid[], $3::text[], $4::jsonb[], $5::int[], $6::uuid[], $7::text[]) AS e(row_id, op, data, base_version, staged_by, staged_by_email)
       ON CONFLICT (dataset_id, row_id) DO UPDATE SET op = excluded.op, data = excluded.data, base_version = excluded.base_version,
         staged_by = excluded.staged_by, staged_by_email = excluded.staged_by_email, staged_at = now()`,
      [
        datasetId,
        edits.map((e) => e.row_id),
        edits.map((e) => e.op),
        edits.map((e) => (e.data === null ? null : JSON.stringify(e.data))),
        edits.map((e) => e.base_version),
        edits.map((e) => e.staged_by),
        edits.map((e) => e.staged_by_email),
      ],
    );
  }

  async unstage(datasetId: string, rowIds: string[]): Promise<void> {
    if (!rowIds.length) return;
    await this.db.query('DELETE FROM dataset_staged_edits WHERE dataset_id = $1 AND row_id = ANY($2::uuid[])', [
      datasetId,
      rowIds,
    ]);
  }

  async discardStaged(datasetId: string): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      'DELETE FROM dataset_staged_edits WHERE dataset_id = $1',
      [datasetId],
    );
    return affected;
  }

  /**
   * Applies every staged edit as version `next` in set-based statements: updated and deleted
   * rows are closed at `next`; updated rows get a new record with their old ordinal; inserted
   * rows get ordinals from `firstOrdinal` in staging order. Clears the staging area.
   */
  async applyStaged(
    datasetId: string,
    next: number,
    firstOrdinal: number,
  ): Promise<{ inserted: number; updated: number; deleted: number }> {
    const head = next - 1;
    await this.db.query(
      `UPDATE dataset_rows r SET removed_in = $2
         FROM dataset_staged_edits s
        WHERE s.dataset_id = $1 AND s.op IN ('update', 'delete') AND r.dataset_id = $1 AND r.row_id = s.row_id AND ${visibleIn('r', '$3')}`,
      [datasetId, next, head],
    );
    await this.db.query(
      `INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
       SELECT $1, s.row_id, $2, r.ordinal, s.data
         FROM dataset_staged_edits s JOIN dataset_rows r ON r.dataset_id = $1 AND r.row_id = s.row_id AND r.removed_in = $2
        WHERE s.dataset_id = $1 AND s.op = 'update'`,
      [datasetId, next],
    );
    await this.db.query(
      `INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
       SELECT $1, s.row_id, $2, $3 + row_number() OVER (ORDER BY s.staged_at, s.row_id) - 1, s.data
         FROM dataset_staged_edits s WHERE s.dataset_id = $1 AND s.op = 'insert'`,
      [datasetId, next, firstOrdinal],
    );
    const counts: Array<{ op: string; n: number }> = await this.db.query(
      'SELECT op, count(*)::int AS n FROM dataset_staged_edits WHERE dataset_id = $1 GROUP BY op',
      [datasetId],
    );
    await this.discardStaged(datasetId);
    const n = (op: string) => counts.find((c) => c.op === op)?.n ?? 0;
    return { inserted: n('insert'), updated: n('update'), deleted: n('delete') };
  }

  /** Staged updates and deletes whose row the newest version no longer has. */
  async staleStaged(datasetId: string, head: number): Promise<string[]> {
    const rows: Array<{ row_id: string }> = await this.db.query(
      `SELECT s.row_id FROM dataset_staged_edits s
        WHERE s.dataset_id = $1 AND s.op IN ('update', 'delete')
          AND NOT EXISTS (SELECT 1 FROM dataset_rows r WHERE r.dataset_id = $1 AND r.row_id = s.row_id AND ${visibleIn('r', '$2')})
        ORDER BY s.row_id`,
      [datasetId, head],
    );
    return rows.map((r) => r.row_id);
  }
}
