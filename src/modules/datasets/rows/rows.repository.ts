import { Injectable } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { BulkWriter, type BulkValue } from '#libs/database/bulk-writer.js';
import type { ColumnStats } from '../entities/dataset-version.entity.js';
import { columnStats } from '../ingest/column-stats.js';
import { DATASET_ROW_COLUMNS } from '../ingest/upload-encoding.js';
import type { CopyFraming, EncodedChunk } from '#libs/database/copy-binary.js';
import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import { grouped, orderedBy, type FilterContext, type SortKey } from '#libs/database/query-language.js';
import type { DatasetRows, DatasetStagedEdits, DB, JsonObject } from '#libs/database/schema.js';
import { countN } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';

/** SQL that keeps the row records of version `$n` of alias `r`: added at or before n, not yet removed at n. */
export function visibleIn(alias: string, placeholder: string): string {
  return `${alias}.added_in <= ${placeholder} AND (${alias}.removed_in IS NULL OR ${alias}.removed_in > ${placeholder})`;
}

/** `visibleIn` for a typed statement: the row records of alias `alias` (of dataset_rows) that version `version` shows. */
export function shownIn(alias: string, version: number | Expression<number>): RawBuilder<SqlBool> {
  const [added, removed] = [sql.ref(`${alias}.added_in`), sql.ref(`${alias}.removed_in`)];
  return sql<SqlBool>`(${added} <= ${version} AND (${removed} IS NULL OR ${removed} > ${version}))`;
}

/**
 * The query language's context over the rows of alias `r` (dataset_rows, or the datasets family's
 * `dataset_version_rows()`, which has the same columns): the row's data, its id, its value of a
 * dimension, and the score of its trace (a span's `trace_id`) that the traces family publishes
 * (`trace_score_of()`: none for rows without a trace). `columns` are the version's.
 */
export function versionRowsContext(columns: Iterable<string>): FilterContext {
  const [datasetId, rowId] = [sql.ref('r.dataset_id'), sql.ref<string>('r.row_id')];
  return {
    row: sql.ref('r.data'),
    rowId,
    dimension: (name) =>
      sql<
        string | null
      >`(SELECT d.value FROM dataset_row_dimensions d WHERE d.dataset_id = ${datasetId} AND d.row_id = ${rowId} AND d.dimension = ${name})`,
    score: (evaluator, metric) =>
      sql`trace_score_of(${datasetId}, r.data->>'trace_id', ${evaluator}::text, ${metric}::text)`,
    columns: new Set(columns),
  };
}

/** A row record as read: its ordinal (an int8) as a number. */
export type StoredRow = Pick<Selectable<DatasetRows>, 'row_id'> & { ordinal: number; data: Record<string, unknown> };

const STAGED_COLUMNS = ['row_id', 'op', 'data', 'base_version', 'staged_by', 'staged_by_email', 'staged_at'] as const;

/** The op column's CHECK constraint, and the data a staged insert or update holds (a row object). */
interface StagedNarrowed {
  op: 'insert' | 'update' | 'delete';
  data: JsonObject | null;
}

export type StagedEdit = Omit<
  Pick<Selectable<DatasetStagedEdits>, (typeof STAGED_COLUMNS)[number]>,
  keyof StagedNarrowed
> &
  Omit<StagedNarrowed, 'data'> & { data: Record<string, unknown> | null };

/** The columns of a StoredRow, over dataset_rows as `r`. */
function storedColumns(eb: ExpressionBuilder<DB & { r: DatasetRows }, 'r'>) {
  return ['r.row_id', eb.cast<number>('r.ordinal', 'float8').as('ordinal'), 'r.data'] as const;
}

export interface RowPageRequest {
  datasetId: string;
  version: number;
  /** The filter over alias `r` (from the query language's compiler). */
  where?: Expression<SqlBool>;
  /** The returned data over alias `r` (a projection), default `r.data`. */
  data?: RawBuilder<Record<string, unknown>>;
  /** Sort keys before the row order. */
  orderBy: SortKey[];
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
/** A page of a version's rows in the generated SQL (src/queries), before its count and keyset are chosen. */
const SAMPLE_PAGE = { datasetId: DummyValue.UUID, version: 1, orderBy: [], limit: 50, offset: 0 };

@Injectable()
export class RowsRepository {
  constructor(
    private readonly db: Db,
    private readonly bulk: BulkWriter,
  ) {}

  /** Appends row records `[row_id, ordinal, data-json]` added in `version`. */
  append(
    datasetId: string,
    version: number,
    batches: AsyncIterable<Array<[string, number, string]>> | Iterable<Array<[string, number, string]>>,
  ): Promise<number> {
    async function* withKeys(): AsyncGenerator<BulkValue[][]> {
      for await (const batch of batches)
        yield batch.map(([rowId, ordinal, json]) => [datasetId, rowId, version, ordinal, json]);
    }
    return this.bulk.append('dataset_rows', DATASET_ROW_COLUMNS, withKeys());
  }

  /** Appends row records already encoded for COPY (ingest/upload-encoding.ts), as `copyChunking` asks. */
  appendEncoded(chunks: AsyncIterable<EncodedChunk>): Promise<number> {
    return this.bulk.copy('dataset_rows', DATASET_ROW_COLUMNS, chunks);
  }

  /** How appendEncoded's chunks are framed and about how large each is, for this database. */
  get copyChunking(): { framing: CopyFraming; chunkBytes: number } {
    return this.bulk.chunking;
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
    await this.db.typedWrite((q) =>
      q
        .updateTable('dataset_rows')
        .set({ removed_in: version })
        .where('dataset_id', '=', datasetId)
        .where('removed_in', 'is', null),
    );
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
    // The keys through jsonb_object_keys, not jsonb_each. jsonb_each's key-value pairs, sorted
    // (the plan chosen for them), held about 250 bytes of the engine's memory a row until the
    // statement ended: PostgreSQL gives it back then, but the embedded engine's WebAssembly
    // memory never shrinks, and one upload of 1,000,000 rows (its columns past DISTINCT_CAP) grew
    // it for good by more than the engine's whole buffer cache. With jsonb_object_keys it did not
    // grow, sorted or hashed (test/e2e/datasets/distinct-counts.e2e-spec.ts; docs/performance.md#runs).
    const sql = `SELECT s.key, count(*)::int AS n FROM (
         SELECT k.key, r.data -> k.key AS value FROM dataset_rows r CROSS JOIN LATERAL jsonb_object_keys(r.data) AS k(key)
          WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND jsonb_typeof(r.data -> k.key) <> 'null' ${only ? 'AND k.key = ANY($3::text[])' : ''}
          GROUP BY 1, 2
       ) s GROUP BY s.key`;
    const parameters = only ? [datasetId, version, only] : [datasetId, version];
    // The planner, which expects a hundred keys a row, would sort the pairs: about twice as long
    // as hashing them, both spilling to disk within work_mem (docs/performance.md#runs). Inside a
    // unit of work it is told to hash, for this statement only.
    const count = (): Promise<Array<{ key: string; n: number }>> => this.db.query(sql, parameters);
    const rows = this.db.inTransaction ? await this.withoutSort(count) : await count();
    return Object.fromEntries(rows.map((r) => [r.key, r.n]));
  }

  /**
   * Runs `statement` with sorting disfavoured by the planner, in the open transaction; a statement
   * that fails takes the setting with its transaction.
   */
  private async withoutSort<T>(statement: () => Promise<T>): Promise<T> {
    await this.db.query('SET LOCAL enable_sort = off');
    const result = await statement();
    await this.db.query('SET LOCAL enable_sort = on');
    return result;
  }

  /** The ids among `rowIds` that are rows of the version. */
  async existing(datasetId: string, version: number, rowIds: string[]): Promise<Set<string>> {
    if (!rowIds.length) return new Set();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select('r.row_id')
        .where('r.dataset_id', '=', datasetId)
        .where('r.row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)
        .where(shownIn('r', version)),
    );
    return new Set(rows.map((r) => r.row_id));
  }

  async byIds(datasetId: string, version: number, rowIds: string[]): Promise<Map<string, StoredRow>> {
    if (!rowIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(storedColumns)
        .where('r.dataset_id', '=', datasetId)
        .where('r.row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)
        .where(shownIn('r', version))
        .$narrowType<{ data: JsonObject }>(),
    );
    return new Map(rows.map((r) => [r.row_id, r]));
  }

  /** One page of a version's rows: filtered, ordered (row order last), projected; the total counted up to a limit. */
  @GenerateSql(
    { name: 'a page with its total', params: [{ ...SAMPLE_PAGE, withTotal: true, countLimit: 10_000 }] },
    { name: 'keyset, no total', params: [{ ...SAMPLE_PAGE, withTotal: false, afterOrdinal: 100 }] },
  )
  async page(req: RowPageRequest): Promise<{ rows: StoredRow[]; total?: number; capped?: boolean }> {
    const matching = (q: QueryBuilder) =>
      q
        .selectFrom('dataset_rows as r')
        .where('r.dataset_id', '=', req.datasetId)
        .where(shownIn('r', req.version))
        .$if(!!req.where, (w) => w.where(grouped(req.where!)));
    const keyset = req.afterOrdinal !== undefined;
    const rows = await this.db.typed((q) =>
      orderedBy(
        matching(q)
          .$if(keyset, (w) => w.where('r.ordinal', '>', String(req.afterOrdinal)))
          .select([
            'r.row_id',
            sql<number>`r.ordinal::float8`.as('ordinal'),
            (req.data ?? sql.ref<Record<string, unknown>>('r.data')).as('data'),
          ])
          .$narrowType<{ data: Record<string, unknown> }>(),
        req.orderBy,
      )
        .orderBy('r.ordinal')
        .limit(req.limit)
        .offset(keyset ? 0 : req.offset),
    );
    if (!req.withTotal) return { rows };
    const cap = req.countLimit;
    const [{ n }] = await this.db.typed((q) =>
      cap
        ? q
            .selectFrom(
              matching(q)
                .select(sql`1`.as('one'))
                .limit(cap + 1)
                .as('s'),
            )
            .select(countN())
        : matching(q).select(countN()),
    );
    return { rows, total: cap ? Math.min(n, cap) : n, capped: cap ? n > cap : false };
  }

  /** Every row of a version in order, a batch at a time (keyset paging on the ordinal): memory stays bounded. */
  async *stream(datasetId: string, version: number, batchSize = 2000): AsyncGenerator<StoredRow[]> {
    let after = -1;
    for (;;) {
      const from = after;
      const rows = await this.db.typed((q) =>
        q
          .selectFrom('dataset_rows as r')
          .select(storedColumns)
          .where('r.dataset_id', '=', datasetId)
          .where(shownIn('r', version))
          .where('r.ordinal', '>', String(from))
          .orderBy('r.ordinal')
          .limit(batchSize)
          .$narrowType<{ data: JsonObject }>(),
      );
      if (!rows.length) return;
      yield rows;
      after = rows[rows.length - 1].ordinal;
      if (rows.length < batchSize) return;
    }
  }

  // Staged edits

  async staged(datasetId: string): Promise<StagedEdit[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('dataset_staged_edits')
        .select(STAGED_COLUMNS)
        .where('dataset_id', '=', datasetId)
        .orderBy('staged_at')
        .orderBy('row_id')
        .$narrowType<StagedNarrowed>(),
    );
  }

  async stagedFor(datasetId: string, rowIds: string[]): Promise<Map<string, StagedEdit>> {
    if (!rowIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_staged_edits')
        .select(STAGED_COLUMNS)
        .where('dataset_id', '=', datasetId)
        .where('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)
        .forUpdate()
        .$narrowType<StagedNarrowed>(),
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
    await this.db.typedWrite((q) =>
      q
        .deleteFrom('dataset_staged_edits')
        .where('dataset_id', '=', datasetId)
        .where('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`),
    );
  }

  async discardStaged(datasetId: string): Promise<number> {
    const discarded = await this.db.typed((q) =>
      q.deleteFrom('dataset_staged_edits').where('dataset_id', '=', datasetId).returning('row_id'),
    );
    return discarded.length;
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
    const written = ['dataset_id', 'row_id', 'added_in', 'ordinal', 'data'] as const;
    await this.db.typedWrite((q) =>
      q
        .updateTable('dataset_rows as r')
        .from('dataset_staged_edits as s')
        .set({ removed_in: next })
        .where('s.dataset_id', '=', datasetId)
        .where('s.op', 'in', ['update', 'delete'])
        .where('r.dataset_id', '=', datasetId)
        .whereRef('r.row_id', '=', 's.row_id')
        .where(shownIn('r', head)),
    );
    await this.db.typedWrite((q) =>
      q
        .insertInto('dataset_rows')
        .columns(written)
        .expression((eb) =>
          eb
            .selectFrom('dataset_staged_edits as s')
            .innerJoin('dataset_rows as r', (join) =>
              join.on('r.dataset_id', '=', datasetId).onRef('r.row_id', '=', 's.row_id').on('r.removed_in', '=', next),
            )
            .select([
              eb.val(datasetId).as('dataset_id'),
              's.row_id',
              eb.val(next).as('added_in'),
              'r.ordinal',
              's.data',
            ])
            .where('s.dataset_id', '=', datasetId)
            .where('s.op', '=', 'update'),
        ),
    );
    await this.db.typedWrite((q) =>
      q
        .insertInto('dataset_rows')
        .columns(written)
        .expression((eb) =>
          eb
            .selectFrom('dataset_staged_edits as s')
            .select((s) => [
              s.val(datasetId).as('dataset_id'),
              's.row_id',
              s.val(next).as('added_in'),
              s(
                s(
                  s.val(firstOrdinal),
                  '+',
                  s.fn.agg<number>('row_number').over((o) => o.orderBy('s.staged_at').orderBy('s.row_id')),
                ),
                '-',
                s.lit(1),
              ).as('ordinal'),
              's.data',
            ])
            .where('s.dataset_id', '=', datasetId)
            .where('s.op', '=', 'insert'),
        ),
    );
    const counts = await this.db.typed((q) =>
      q
        .selectFrom('dataset_staged_edits')
        .select(['op', sql<number>`count(*)::int`.as('n')])
        .where('dataset_id', '=', datasetId)
        .groupBy('op'),
    );
    await this.discardStaged(datasetId);
    const n = (op: string) => counts.find((c) => c.op === op)?.n ?? 0;
    return { inserted: n('insert'), updated: n('update'), deleted: n('delete') };
  }

  /** Staged updates and deletes whose row the newest version no longer has. */
  async staleStaged(datasetId: string, head: number): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_staged_edits as s')
        .select('s.row_id')
        .where('s.dataset_id', '=', datasetId)
        .where('s.op', 'in', ['update', 'delete'])
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('dataset_rows as r')
                .select(eb.lit(1).as('one'))
                .where('r.dataset_id', '=', datasetId)
                .whereRef('r.row_id', '=', 's.row_id')
                .where(shownIn('r', head)),
            ),
          ),
        )
        .orderBy('s.row_id'),
    );
    return rows.map((r) => r.row_id);
  }
}
