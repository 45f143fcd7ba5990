import { Injectable } from '@nestjs/common';
import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { BulkWriter, type BulkValue } from '#libs/database/bulk-writer.js';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { DatasetVersions } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { RowSource } from './dataset-writes.types.js';
import { shownIn } from './rows/rows.repository.js';

/** How many rows a version lost. */
type VersionLoss = Pick<Selectable<DatasetVersions>, 'number'> & { rows: number };

const STAGE_COLUMNS = [
  { name: 'row_id', type: 'uuid' as const },
  { name: 'ordinal', type: 'bigint' as const },
  { name: 'data', type: 'jsonb' as const },
];

/** Where a page of rows by key ends: the value under the key and the ordinal of its last row. */
interface KeyCursor {
  value: string;
  ordinal: string;
}

/** A key of a row's data a statement may name: a plain word (it is written into the statement). */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `key` as a literal of the statement, not a parameter: an expression index over `data ->> 'key'`
 * (or a partial one under `data ? 'key'`) serves only a statement that names the same literal.
 */
export function keyLiteral(key: string) {
  if (!PLAIN_KEY.test(key)) throw new Error(`${JSON.stringify(key)} is not a plain key of a row's data`);
  return sql.lit(key);
}

/** `r.data ? '<key>'` for `key` and each of `holding`, as literals: the predicate of a partial index over rows holding them. */
function held(key: string, holding: string[]) {
  return [key, ...holding].map((k) => sql<SqlBool>`r.data ? ${keyLiteral(k)}`);
}

/**
 * A dataset's rows as the writers of rows in bulk (trace landings, live landing, retention) and
 * the readers of a version's rows by a key of their data see them: appended by COPY or from the
 * caller's own statement, deleted by age or by the version they were written under, read grouped
 * by a key.
 */
@Injectable()
export class BulkRowsRepository {
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
   * Appends, in one statement with the caller's `source`, its rows as rows of version `number`,
   * their ordinals taken from the dataset's counter in their place order (the counter moves past
   * every row taken); rows the dataset already shows are not written again. Answers how many the
   * source yielded (`taken`) and how many were written (`landed`).
   */
  async appendFrom(datasetId: string, number: number, source: RowSource): Promise<{ taken: number; landed: number }> {
    const [row] = await this.db.typed((q) =>
      source(q)
        .with('taken', (w) => w.selectFrom('sourced_rows').select((eb) => eb.fn.countAll<string>().as('n')))
        // Nothing taken moves nothing: the dataset's record is not written for an empty batch.
        .with('counter', (w) =>
          w
            .updateTable('datasets')
            .from('taken as t')
            .set((eb) => ({ next_ordinal: eb('next_ordinal', '+', eb.ref('t.n')) }))
            .where('datasets.id', '=', datasetId)
            .where(sql<SqlBool>`t.n > 0`)
            .returning(sql<string>`datasets.next_ordinal - t.n`.as('first')),
        )
        .with('written', (w) =>
          w
            .insertInto('dataset_rows')
            .columns(['dataset_id', 'row_id', 'added_in', 'ordinal', 'data'])
            .expression(
              w
                .selectFrom(['sourced_rows as f', 'counter as c'])
                .select([
                  sql<string>`${datasetId}::uuid`.as('dataset_id'),
                  'f.row_id',
                  sql<number>`${number}::int`.as('added_in'),
                  sql<string>`c.first + f.place - 1`.as('ordinal'),
                  'f.data',
                ])
                .where((eb) =>
                  eb.not(
                    eb.exists(
                      eb
                        .selectFrom('dataset_rows as r')
                        .select(sql<number>`1`.as('one'))
                        .where('r.dataset_id', '=', datasetId)
                        .whereRef('r.row_id', '=', 'f.row_id')
                        .where('r.removed_in', 'is', null),
                    ),
                  ),
                ),
            )
            .returning(sql<number>`1`.as('one')),
        )
        .selectNoFrom((eb) => [
          eb
            .selectFrom('taken')
            .select(sql<number>`n::int`.as('n'))
            .as('taken'),
          eb
            .selectFrom('written')
            .select(sql<number>`count(*)::int`.as('n'))
            .as('landed'),
        ]),
    );
    return { taken: row.taken ?? 0, landed: row.landed ?? 0 };
  }

  /** Of `rowIds`, the rows the dataset shows now (in its newest version, or written under the next one), with the version each was written under. */
  async currentByIds(
    datasetId: string,
    rowIds: string[],
  ): Promise<Array<{ row_id: string; added_in: number; data: Record<string, unknown> }>> {
    if (!rowIds.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows')
        .select(['row_id', 'added_in', 'data'])
        .where('dataset_id', '=', datasetId)
        .where('removed_in', 'is', null)
        .where('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`),
    );
    return rows.map((r) => ({ row_id: r.row_id, added_in: r.added_in, data: r.data as Record<string, unknown> }));
  }

  /**
   * New data (jsonb text) for rows the dataset shows, as of version `number`: a row written under
   * `number` is changed in place; one written under an earlier version stays in that version
   * (removed in `number`) and its new record, at the same ordinal, is written under `number`.
   * Answers how many rows were revised.
   */
  async revise(datasetId: string, number: number, rows: Array<{ row_id: string; data: string }>): Promise<number> {
    if (!rows.length) return 0;
    const [row]: Array<{ n: number }> = await this.db.query(
      `WITH input AS (SELECT * FROM unnest($2::uuid[], $3::jsonb[]) AS s(row_id, data)),
       in_place AS (
         UPDATE dataset_rows r SET data = i.data FROM input i
          WHERE r.dataset_id = $1 AND r.row_id = i.row_id AND r.added_in = $4 AND r.removed_in IS NULL RETURNING 1
       ), retired AS (
         UPDATE dataset_rows r SET removed_in = $4 FROM input i
          WHERE r.dataset_id = $1 AND r.row_id = i.row_id AND r.added_in < $4 AND r.removed_in IS NULL
          RETURNING r.row_id, r.ordinal, i.data
       ), written AS (
         INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
         SELECT $1, row_id, $4, ordinal, data FROM retired RETURNING 1
       ) SELECT ((SELECT count(*) FROM in_place) + (SELECT count(*) FROM written))::int AS n`,
      [datasetId, rows.map((r) => r.row_id), rows.map((r) => r.data), number],
    );
    return row?.n ?? 0;
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
   * Deletes up to `limit` of the dataset's rows whose data holds a time under `key` before
   * `cutoff` (from every version) and answers, per version number, how many rows it lost, so its
   * row count follows.
   */
  async deleteBefore(
    datasetId: string,
    key: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ deleted: number; lost: VersionLoss[] }> {
    const [row] = await this.db.query<Array<{ deleted: number; lost: VersionLoss[] | null }>>(
      `WITH gone AS (
         DELETE FROM dataset_rows r USING (
           SELECT row_id, added_in FROM dataset_rows WHERE dataset_id = $1 AND (data->>$4)::timestamptz < $2 LIMIT $3
         ) x WHERE r.dataset_id = $1 AND r.row_id = x.row_id AND r.added_in = x.added_in RETURNING r.added_in, r.removed_in
       ), lost AS (
         SELECT v.number, count(*)::int AS rows FROM dataset_versions v JOIN gone g ON g.added_in <= v.number AND (g.removed_in IS NULL OR g.removed_in > v.number)
          WHERE v.dataset_id = $1 GROUP BY v.number
       ) SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT json_agg(json_build_object('number', number, 'rows', rows)) FROM lost) AS lost`,
      [datasetId, cutoff, limit, key],
    );
    return { deleted: row.deleted, lost: row.lost ?? [] };
  }

  /**
   * The rows version `number` shows that hold `key` and every key of `holding`, ordered by the
   * value under `key` then row order, their data in pages of `pageSize` (keyset-paged on that
   * value and the ordinal, so an index on `(dataset_id, (data ->> key), ordinal)` walks them).
   */
  async *byKey(
    datasetId: string,
    number: number,
    key: string,
    holding: string[],
    pageSize: number,
  ): AsyncGenerator<Array<Record<string, unknown>>> {
    const value = sql<string>`r.data ->> ${keyLiteral(key)}`;
    let after: KeyCursor | null = null;
    for (;;) {
      const from: KeyCursor | null = after;
      const rows: Array<{ data: unknown; ordinal: string; value: string }> = await this.db.typed((q) =>
        q
          .selectFrom('dataset_rows as r')
          .select(['r.data', 'r.ordinal', value.as('value')])
          .where('r.dataset_id', '=', datasetId)
          .where(shownIn('r', number))
          .where((eb) => eb.and(held(key, holding)))
          .$if(from !== null, (s) =>
            s.where(sql<SqlBool>`(${value}, r.ordinal) > (${from!.value}, ${from!.ordinal}::bigint)`),
          )
          .orderBy(value)
          .orderBy('r.ordinal')
          .limit(pageSize),
      );
      if (!rows.length) return;
      yield rows.map((r) => r.data as Record<string, unknown>);
      const last = rows[rows.length - 1];
      after = { value: last.value, ordinal: String(last.ordinal) };
      if (rows.length < pageSize) return;
    }
  }

  /** How many distinct values the rows version `number` shows hold under `key`. */
  async countDistinct(datasetId: string, number: number, key: string): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(sql<number>`count(DISTINCT r.data ->> ${keyLiteral(key)})::int`.as('n'))
        .where('r.dataset_id', '=', datasetId)
        .where(shownIn('r', number)),
    );
    return row.n;
  }

  /**
   * Which of `values` the rows version `number` shows hold under `key`, among the rows holding
   * every key of `holding` too (named as literals, so a partial index over such rows serves it).
   */
  async presentValues(
    datasetId: string,
    number: number,
    key: string,
    values: string[],
    holding: string[] = [],
  ): Promise<Set<string>> {
    if (!values.length) return new Set();
    const value = sql<string>`r.data ->> ${keyLiteral(key)}`;
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(value.as('v'))
        .distinct()
        .where('r.dataset_id', '=', datasetId)
        .where(shownIn('r', number))
        .where((eb) => eb.and(held(key, holding)))
        .where(value, '=', sql<string>`ANY(${values}::text[])`),
    );
    return new Set(rows.map((r) => r.v));
  }
  /**
   * Rows the dataset shows now (recorded in a version, not removed since) past ordinal `after`, in
   * row order, at most `limit`, each with whether `where` (over alias `r`) holds for it. While a
   * landing holds the dataset's next version number (`writing_version`) nothing is answered: rows
   * of that landing become visible, below the ordinals written after it, only when it finishes.
   * With `onlyMatching`, only the rows `where` holds for.
   */
  @GenerateSql({ params: [DummyValue.UUID, -1, 5000] })
  async landedAfter(
    datasetId: string,
    after: number,
    limit: number,
    where?: Expression<SqlBool>,
    onlyMatching = false,
  ): Promise<Array<{ ordinal: number; data: Record<string, unknown>; matched: boolean }>> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .innerJoin('datasets as d', 'd.id', 'r.dataset_id')
        .select((eb) => [
          eb.cast<number>('r.ordinal', 'float8').as('ordinal'),
          'r.data',
          sql<boolean>`${where ?? sql<SqlBool>`true`}`.as('matched'),
        ])
        .where('r.dataset_id', '=', datasetId)
        .where('d.writing_version', 'is', null)
        .where('r.ordinal', '>', sql<string>`${after}::bigint`)
        .where('r.removed_in', 'is', null)
        .where((eb) => eb('r.added_in', '<=', eb.ref('d.latest_version')))
        .$if(onlyMatching && where !== undefined, (s) => s.where(where!))
        .orderBy('r.ordinal')
        .limit(limit),
    );
    return rows.map((r) => ({
      ordinal: r.ordinal,
      data: r.data as Record<string, unknown>,
      matched: r.matched === true,
    }));
  }

  /**
   * The rows the dataset shows now whose value under `key` is one of `values` and that hold every
   * key of `holding` too, by that value then row order. The keys are named as literals so a
   * partial index over such rows (`dataset_rows_trace_idx`) serves it; without them the planner
   * cannot use it and reads every row of the table.
   */
  async currentWithValues(
    datasetId: string,
    key: string,
    values: string[],
    holding: string[] = [],
  ): Promise<Array<Record<string, unknown>>> {
    if (!values.length) return [];
    const value = sql<string>`r.data ->> ${keyLiteral(key)}`;
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .innerJoin('datasets as d', 'd.id', 'r.dataset_id')
        .select('r.data')
        .where('r.dataset_id', '=', datasetId)
        .where('r.removed_in', 'is', null)
        .where((eb) => eb('r.added_in', '<=', eb.ref('d.latest_version')))
        .where((eb) => eb.and(held(key, holding)))
        .where(value, '=', sql<string>`ANY(${values}::text[])`)
        .orderBy(value)
        .orderBy('r.ordinal'),
    );
    return rows.map((r) => r.data as Record<string, unknown>);
  }
}
