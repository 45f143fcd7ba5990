import { Injectable } from '@nestjs/common';
import { sql, type Expression, type QueryCreator, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import { grouped } from '#libs/database/query-language.js';
import { countN } from '#libs/database/typed-fragments.js';
import { shownIn, visibleIn } from '../rows/rows.repository.js';
import type {
  DatasetDimensions,
  DatasetRowDimensions,
  DatasetRows,
  Datasets,
  DatasetVersions,
  DB,
  JsonObject,
} from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';

/** The version of a dataset that cross-dataset counts take: the current one, else the latest, with its visible rows. */
export interface CountedVersion {
  dataset_id: Selectable<Datasets>['id'];
  name: Selectable<Datasets>['name'];
  version_id: Selectable<DatasetVersions>['id'] | null;
  /** The version's number (0 when the dataset has none). */
  n: Selectable<DatasetVersions>['number'];
  version_source: 'current' | 'latest';
  rows: number;
}

/** Rows of the counted versions assigned `value` of `dimension`. */
export type DimensionCount = Pick<Selectable<DatasetRowDimensions>, 'dimension' | 'value'> & { rows: number };

/** Rows assigned both `values[0]` of `dimensions[0]` and `values[1]` of `dimensions[1]`. */
export interface PairCount {
  dimensions: [string, string];
  values: [Selectable<DatasetRowDimensions>['value'], Selectable<DatasetRowDimensions>['value']];
  rows: number;
}

/** The counted version of each of the workspace's datasets in `$2`: the current one, else the latest. */
const COUNTED = `SELECT d.id AS dataset_id, d.name, coalesce(cv.id, lv.id) AS version_id, coalesce(cv.number, d.latest_version) AS n,
    CASE WHEN cv.id IS NULL THEN 'latest' ELSE 'current' END AS version_source
  FROM datasets d
  LEFT JOIN dataset_versions cv ON cv.id = d.current_version_id
  LEFT JOIN dataset_versions lv ON lv.dataset_id = d.id AND lv.number = d.latest_version
  WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[])`;

export type DimensionDefinition = Pick<Selectable<DatasetDimensions>, 'name' | 'description' | 'values'>;

type RowId = Selectable<DatasetRows>['row_id'];

/** A row's value (text) of dimension `name`, over alias `r`. */
export function dimensionValue(name: string): RawBuilder<string | null> {
  return sql<
    string | null
  >`(SELECT d.value FROM dataset_row_dimensions d WHERE d.dataset_id = ${sql.ref('r.dataset_id')} AND d.row_id = ${sql.ref('r.row_id')} AND d.dimension = ${name})`;
}

/** The rows of alias `r` that carry one of `values` of dimension `name`. */
export function carriesAnyOf(name: string, values: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`EXISTS (SELECT 1 FROM dataset_row_dimensions d WHERE d.dataset_id = ${sql.ref('r.dataset_id')} AND d.row_id = ${sql.ref('r.row_id')} AND d.dimension = ${name} AND d.value = ANY(${values}::text[]))`;
}

/** The rows of the version (alias `r`) that `where` selects. */
function selected(q: QueryCreator<DB>, datasetId: string, version: number, where: Expression<SqlBool>) {
  return q
    .selectFrom('dataset_rows as r')
    .where('r.dataset_id', '=', datasetId)
    .where(shownIn('r', version))
    .where(grouped(where));
}

/**
 * Dimensions of a dataset and their assignment to rows. Assignments belong to a row id, so they
 * follow the row across versions; counts are always taken over one version's rows.
 * Every row-selecting statement takes the dataset, the version number and a filter over alias `r`
 * (RowSelection).
 */
@Injectable()
export class DimensionsRepository {
  constructor(private readonly db: Db) {}

  async definitions(datasetId: string): Promise<DimensionDefinition[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('dataset_dimensions')
        .select(['name', 'description', 'values'])
        .where('dataset_id', '=', datasetId)
        .orderBy('name'),
    );
  }

  /** Creates the dimension and adds the value when missing; says which it did. */
  async ensure(
    datasetId: string,
    name: string,
    value: string,
    description: string,
  ): Promise<{ createdDimension: boolean; createdValue: boolean }> {
    const created = await this.db.typed((q) =>
      q
        .insertInto('dataset_dimensions')
        .values({ dataset_id: datasetId, name, description, values: sql<string[]>`ARRAY[${value}]::text[]` })
        .onConflict((c) => c.columns(['dataset_id', 'name']).doNothing())
        .returning('name'),
    );
    if (created.length) return { createdDimension: true, createdValue: true };
    const added = await this.db.typed((q) =>
      q
        .updateTable('dataset_dimensions')
        .set((eb) => ({ values: eb.fn<string[]>('array_append', ['values', eb.val(value)]) }))
        .where('dataset_id', '=', datasetId)
        .where('name', '=', name)
        .where((eb) => eb.not(eb(eb.val(value), '=', eb.fn.any('values'))))
        .returning('name'),
    );
    return { createdDimension: false, createdValue: added.length > 0 };
  }

  /**
   * Assigns `value` of `dimension` to the version's rows matching `where` (over alias `r`).
   * Answers rows assigned and, of them, rows that had another value.
   */
  async assign(req: {
    datasetId: string;
    version: number;
    dimension: string;
    value: string;
    userId: string;
    where: Expression<SqlBool>;
  }): Promise<{ assigned: number; reassigned: number }> {
    const [row] = await this.db.typed((q) =>
      q
        .with('target', (w) => selected(w, req.datasetId, req.version, req.where).select('r.row_id'))
        .with('previous', (w) =>
          w
            .selectFrom('dataset_row_dimensions as d')
            .innerJoin('target as t', 't.row_id', 'd.row_id')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('d.dataset_id', '=', req.datasetId)
            .where('d.dimension', '=', req.dimension)
            .where('d.value', '<>', req.value),
        )
        .with('written', (w) =>
          w
            .insertInto('dataset_row_dimensions')
            .columns(['dataset_id', 'row_id', 'dimension', 'value', 'assigned_by'])
            .expression((eb) =>
              eb
                .selectFrom('target as t')
                .select([
                  eb.val(req.datasetId).as('dataset_id'),
                  't.row_id',
                  eb.val(req.dimension).as('dimension'),
                  eb.val(req.value).as('value'),
                  eb.val(req.userId).as('assigned_by'),
                ]),
            )
            .onConflict((c) =>
              c.columns(['dataset_id', 'row_id', 'dimension']).doUpdateSet((eb) => ({
                value: eb.ref('excluded.value'),
                assigned_by: eb.ref('excluded.assigned_by'),
                assigned_at: sql`now()`,
              })),
            )
            .returning(sql`1`.as('one')),
        )
        .selectNoFrom([
          sql<number>`(SELECT count(*) FROM written)::int`.as('assigned'),
          sql<number>`(SELECT n FROM previous)::int`.as('reassigned'),
        ]),
    );
    return row;
  }

  /** Rows of the version per (dimension, value). */
  async counts(
    datasetId: string,
    version: number,
  ): Promise<Array<Pick<Selectable<DatasetRowDimensions>, 'dimension' | 'value'> & { count: number }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('dataset_row_dimensions as d')
        .innerJoin('dataset_rows as r', (join) =>
          join.onRef('r.dataset_id', '=', 'd.dataset_id').onRef('r.row_id', '=', 'd.row_id').on(shownIn('r', version)),
        )
        .select(['d.dimension', 'd.value', sql<number>`count(*)::int`.as('count')])
        .where('d.dataset_id', '=', datasetId)
        .groupBy(['d.dimension', 'd.value'])
        .orderBy('d.dimension')
        .orderBy(sql`count(*)`, 'desc')
        .orderBy('d.value'),
    );
  }

  async countMatching(datasetId: string, version: number, where: Expression<SqlBool>): Promise<number> {
    const [{ n }] = await this.db.typed((q) => selected(q, datasetId, version, where).select(countN()));
    return n;
  }

  /** Counts of matching rows per combination of the grouping dimensions' values. */
  async groups(
    datasetId: string,
    version: number,
    where: Expression<SqlBool>,
    groupBy: string[],
  ): Promise<Array<{ values: Record<string, string | null>; count: number }>> {
    if (!groupBy.length) return [];
    const aliases = groupBy.map((_, i) => `g${i}`);
    const rows = await this.db.typed((q) =>
      aliases
        .reduce(
          (query, alias) => query.orderBy(sql`${sql.ref(alias)} NULLS LAST`),
          selected(q, datasetId, version, where)
            .select(groupBy.map((name, i) => dimensionValue(name).as(aliases[i])))
            .select(countN())
            .groupBy(aliases.map((_, i) => sql.lit(i + 1)))
            .orderBy('n', 'desc'),
        )
        .$castTo<Record<string, Selectable<DatasetRowDimensions>['value'] | null> & { n: number }>(),
    );
    return rows.map((row) => ({
      values: Object.fromEntries(groupBy.map((name, i) => [name, row[aliases[i]]])),
      count: row.n,
    }));
  }

  /** A page of matching rows with their dimension values under `_dimensions`. */
  async rows(
    datasetId: string,
    version: number,
    where: Expression<SqlBool>,
    limit: number,
    offset: number,
  ): Promise<
    Array<
      Pick<Selectable<DatasetRows>, 'row_id'> & {
        data: Record<string, unknown>;
        dims: Record<string, Selectable<DatasetRowDimensions>['value']>;
      }
    >
  > {
    return this.db.typed((q) =>
      selected(q, datasetId, version, where)
        .select([
          'r.row_id',
          'r.data',
          (eb) =>
            eb
              .selectFrom('dataset_row_dimensions as d')
              .select(
                sql<Record<string, string>>`coalesce(jsonb_object_agg(d.dimension, d.value), '{}'::jsonb)`.as('dims'),
              )
              .whereRef('d.dataset_id', '=', 'r.dataset_id')
              .whereRef('d.row_id', '=', 'r.row_id')
              .as('dims'),
        ])
        .orderBy('r.ordinal')
        .limit(limit)
        .offset(offset)
        .$narrowType<{ data: JsonObject; dims: Record<string, string> }>(),
    );
  }

  /**
   * Members of a partition at session level: rows grouped by the session column (in order of
   * their first row), or one session per row when the version maps no session column.
   */
  async sessions(
    datasetId: string,
    version: number,
    where: Expression<SqlBool>,
    sessionColumn: string | undefined,
    limit: number,
    offset: number,
  ): Promise<Array<{ session_id: string; row_ids: RowId[] }>> {
    const key = sessionColumn
      ? sql<string>`coalesce(r.data ->> ${sessionColumn}, r.row_id::text)`
      : sql<string>`r.row_id::text`;
    return this.db.typed((q) =>
      selected(q, datasetId, version, where)
        .select([key.as('session_id'), sql<RowId[]>`array_agg(r.row_id::text ORDER BY r.ordinal)`.as('row_ids')])
        .groupBy(sql.lit(1))
        .orderBy(sql`min(r.ordinal)`)
        .limit(limit)
        .offset(offset),
    );
  }

  /** Traces of a trace dataset's version among the matching span rows, with their spans in start order; the session is any span's of the whole trace. */
  traces(
    datasetId: string,
    version: number,
    where: Expression<SqlBool>,
    limit: number,
    offset: number,
  ): Promise<Array<{ trace_id: string; session_id: string | null; row_ids: RowId[] }>> {
    return this.db.typed((q) =>
      q
        .selectFrom(
          selected(q, datasetId, version, where)
            .select([
              sql<string>`r.data ->> 'trace_id'`.as('trace_id'),
              sql<string>`min(r.data ->> 'start_time')`.as('started'),
              sql<RowId[]>`array_agg(r.row_id::text ORDER BY r.data ->> 'start_time', r.ordinal)`.as('row_ids'),
            ])
            .groupBy(sql.lit(1))
            .orderBy(sql.lit(2))
            .orderBy(sql.lit(1))
            .limit(limit)
            .offset(offset)
            .as('t'),
        )
        .select([
          't.trace_id',
          't.row_ids',
          (eb) =>
            eb
              .selectFrom('dataset_rows as x')
              .select(sql<string | null>`min(x.data ->> 'session_id')`.as('session_id'))
              .where('x.dataset_id', '=', datasetId)
              .where(shownIn('x', version))
              .where(sql<SqlBool>`x.data @> jsonb_build_object('trace_id', t.trace_id)`)
              .as('session_id'),
        ])
        .orderBy('t.started')
        .orderBy('t.trace_id'),
    );
  }

  /** The matching span rows of a trace dataset's version, by trace then start time. */
  spans(
    datasetId: string,
    version: number,
    where: Expression<SqlBool>,
    limit: number,
    offset: number,
  ): Promise<Array<Pick<Selectable<DatasetRows>, 'row_id'> & { span_id: string; trace_id: string }>> {
    return this.db.typed((q) =>
      selected(q, datasetId, version, where)
        .select([
          sql<string>`r.data ->> 'span_id'`.as('span_id'),
          sql<string>`r.data ->> 'trace_id'`.as('trace_id'),
          sql<RowId>`r.row_id::text`.as('row_id'),
        ])
        .orderBy(sql`r.data ->> 'trace_id'`)
        .orderBy(sql`r.data ->> 'start_time'`)
        .orderBy('r.ordinal')
        .limit(limit)
        .offset(offset),
    );
  }

  // Across datasets (a project's coverage): each dataset's counted version (COUNTED).

  /** The counted version of each of the workspace's datasets named, with its visible rows, by name. */
  countedVersions(workspaceId: string, datasetIds: string[]): Promise<CountedVersion[]> {
    return this.db.query(
      `WITH src AS (${COUNTED})
       SELECT src.dataset_id, src.name, src.version_id, src.n, src.version_source,
              (SELECT count(*)::int FROM dataset_rows r WHERE r.dataset_id = src.dataset_id AND ${visibleIn('r', 'src.n')}) AS rows
         FROM src ORDER BY lower(src.name), src.dataset_id`,
      [workspaceId, datasetIds],
    );
  }

  /** Rows per (dimension, value) over those versions, for the dimensions given. */
  async valueCounts(workspaceId: string, datasetIds: string[], dimensions: string[]): Promise<DimensionCount[]> {
    if (!datasetIds.length || !dimensions.length) return [];
    return this.db.query(
      `WITH src AS (${COUNTED})
       SELECT rd.dimension, rd.value, count(*)::int AS rows
         FROM src JOIN dataset_rows r ON r.dataset_id = src.dataset_id AND ${visibleIn('r', 'src.n')}
         JOIN dataset_row_dimensions rd ON rd.dataset_id = r.dataset_id AND rd.row_id = r.row_id
        WHERE rd.dimension = ANY($3::text[])
        GROUP BY rd.dimension, rd.value`,
      [workspaceId, datasetIds, dimensions],
    );
  }

  /** Rows per pair of values of two dimensions over those versions. */
  async pairCounts(workspaceId: string, datasetIds: string[], a: string, b: string): Promise<PairCount[]> {
    if (!datasetIds.length) return [];
    const rows = await this.db.query<Array<{ va: PairCount['values'][0]; vb: PairCount['values'][1]; rows: number }>>(
      `WITH src AS (${COUNTED})
       SELECT da.value AS va, db.value AS vb, count(*)::int AS rows
         FROM src JOIN dataset_rows r ON r.dataset_id = src.dataset_id AND ${visibleIn('r', 'src.n')}
         JOIN dataset_row_dimensions da ON da.dataset_id = r.dataset_id AND da.row_id = r.row_id AND da.dimension = $3
         JOIN dataset_row_dimensions db ON db.dataset_id = r.dataset_id AND db.row_id = r.row_id AND db.dimension = $4
        GROUP BY da.value, db.value`,
      [workspaceId, datasetIds, a, b],
    );
    return rows.map((r) => ({ dimensions: [a, b], values: [r.va, r.vb], rows: r.rows }));
  }
}
