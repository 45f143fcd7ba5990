import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import { shownIn, visibleIn } from '../rows/rows.repository.js';
import type {
  DatasetDimensions,
  DatasetRowDimensions,
  DatasetRows,
  Datasets,
  DatasetVersions,
} from '../../../../libs/database/schema.js';
import { Db } from '../../../../libs/database/unit-of-work.js';

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

/**
 * Dimensions of a dataset and their assignment to rows. Assignments belong to a row id, so they
 * follow the row across versions; counts are always taken over one version's rows.
 * Every row-selecting statement takes `$1` = dataset id and `$2` = version number.
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
   * Assigns `value` of `dimension` to the version's rows matching `where` (SQL over alias `r`
   * whose parameters follow $1..$5). Answers rows assigned and, of them, rows that had another value.
   */
  async assign(req: {
    datasetId: string;
    version: number;
    dimension: string;
    value: string;
    userId: string;
    where: string;
    params: unknown[];
  }): Promise<{ assigned: number; reassigned: number }> {
    const [row] = await this.db.query<Array<{ assigned: number; reassigned: number }>>(
      `WITH target AS (
         SELECT r.row_id FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${req.where})
       ), previous AS (
         SELECT count(*) AS n FROM dataset_row_dimensions d JOIN target t ON t.row_id = d.row_id
          WHERE d.dataset_id = $1 AND d.dimension = $3 AND d.value <> $4
       ), written AS (
         INSERT INTO dataset_row_dimensions (dataset_id, row_id, dimension, value, assigned_by)
         SELECT $1, t.row_id, $3, $4, $5 FROM target t
         ON CONFLICT (dataset_id, row_id, dimension) DO UPDATE SET value = excluded.value, assigned_by = excluded.assigned_by, assigned_at = now()
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM written)::int AS assigned, (SELECT n FROM previous)::int AS reassigned`,
      [req.datasetId, req.version, req.dimension, req.value, req.userId, ...req.params],
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

  /** SQL for a row's value of a dimension given by placeholder, over alias `r`. */
  static valueOf(placeholder: string): string {
    return `(SELECT d.value FROM dataset_row_dimensions d WHERE d.dataset_id = r.dataset_id AND d.row_id = r.row_id AND d.dimension = ${placeholder})`;
  }

  async countMatching(datasetId: string, version: number, where: string, params: unknown[]): Promise<number> {
    const [{ n }] = await this.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})`,
      [datasetId, version, ...params],
    );
    return n;
  }

  /** Counts of matching rows per combination of the grouping dimensions' values. */
  async groups(
    datasetId: string,
    version: number,
    where: string,
    params: unknown[],
    groupBy: string[],
  ): Promise<Array<{ values: Record<string, string | null>; count: number }>> {
    if (!groupBy.length) return [];
    const all = [datasetId, version, ...params];
    const exprs = groupBy.map((name) => {
      all.push(name);
      return DimensionsRepository.valueOf(`$${all.length}`);
    });
    const rows = await this.db.query<
      Array<Record<string, Selectable<DatasetRowDimensions>['value'] | null> & { n: number }>
    >(
      `SELECT ${exprs.map((e, i) => `${e} AS g${i}`).join(', ')}, count(*)::int AS n
         FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})
        GROUP BY ${exprs.map((_, i) => i + 1).join(', ')} ORDER BY n DESC, ${exprs.map((_, i) => `g${i} NULLS LAST`).join(', ')}`,
      all,
    );
    return rows.map((row) => ({
      values: Object.fromEntries(groupBy.map((name, i) => [name, row[`g${i}`]])),
      count: row.n,
    }));
  }

  /** A page of matching rows with their dimension values under `_dimensions`. */
  async rows(
    datasetId: string,
    version: number,
    where: string,
    params: unknown[],
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
    return this.db.query(
      `SELECT r.row_id, r.data,
              (SELECT coalesce(jsonb_object_agg(d.dimension, d.value), '{}'::jsonb) FROM dataset_row_dimensions d WHERE d.dataset_id = r.dataset_id AND d.row_id = r.row_id) AS dims
         FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})
        ORDER BY r.ordinal LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      [datasetId, version, ...params],
    );
  }

  /**
   * Members of a partition at session level: rows grouped by the session column (in order of
   * their first row), or one session per row when the version maps no session column.
   */
  async sessions(
    datasetId: string,
    version: number,
    where: string,
    params: unknown[],
    sessionColumn: string | undefined,
    limit: number,
    offset: number,
  ): Promise<Array<{ session_id: string; row_ids: RowId[] }>> {
    const all: unknown[] = [datasetId, version, ...params];
    let key = 'r.row_id::text';
    if (sessionColumn) {
      all.push(sessionColumn);
      key = `coalesce(r.data ->> $${all.length}, r.row_id::text)`;
    }
    return this.db.query(
      `SELECT ${key} AS session_id, array_agg(r.row_id::text ORDER BY r.ordinal) AS row_ids
         FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})
        GROUP BY 1 ORDER BY min(r.ordinal) LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      all,
    );
  }

  /** Traces of a trace dataset's version among the matching span rows, with their spans in start order; the session is any span's of the whole trace. */
  traces(
    datasetId: string,
    version: number,
    where: string,
    params: unknown[],
    limit: number,
    offset: number,
  ): Promise<Array<{ trace_id: string; session_id: string | null; row_ids: RowId[] }>> {
    return this.db.query(
      `SELECT t.trace_id, t.row_ids,
              (SELECT min(x.data ->> 'session_id') FROM dataset_rows x
                WHERE x.dataset_id = $1 AND ${visibleIn('x', '$2')} AND x.data @> jsonb_build_object('trace_id', t.trace_id)) AS session_id
         FROM (SELECT r.data ->> 'trace_id' AS trace_id, min(r.data ->> 'start_time') AS started,
                      array_agg(r.row_id::text ORDER BY r.data ->> 'start_time', r.ordinal) AS row_ids
                 FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})
                GROUP BY 1 ORDER BY 2, 1 LIMIT ${Number(limit)} OFFSET ${Number(offset)}) t
        ORDER BY t.started, t.trace_id`,
      [datasetId, version, ...params],
    );
  }

  /** The matching span rows of a trace dataset's version, by trace then start time. */
  spans(
    datasetId: string,
    version: number,
    where: string,
    params: unknown[],
    limit: number,
    offset: number,
  ): Promise<Array<Pick<Selectable<DatasetRows>, 'row_id'> & { span_id: string; trace_id: string }>> {
    return this.db.query(
      `SELECT r.data ->> 'span_id' AS span_id, r.data ->> 'trace_id' AS trace_id, r.row_id::text AS row_id
         FROM dataset_rows r WHERE r.dataset_id = $1 AND ${visibleIn('r', '$2')} AND (${where})
        ORDER BY r.data ->> 'trace_id', r.data ->> 'start_time', r.ordinal LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      [datasetId, version, ...params],
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
