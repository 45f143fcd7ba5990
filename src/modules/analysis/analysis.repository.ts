import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import { grouped, orderedBy, type FilterContext, type RowQuery } from '#libs/database/query-language.js';
import { publishedRows } from '#libs/database/typed-fragments.js';
import type { DB } from '#libs/database/schema.js';
import type { NarrowedRow } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';
import { trackedRecord, type TrackedColumns } from '#libs/queue/tracked-job.js';

export type AnalysisKind = 'text' | 'annotation' | 'visual';

/** The records analysis and cluster jobs settle (their `run_id`): the queue keeps their tracked columns. */
export const ANALYSIS_RUNS = trackedRecord('analysis_runs', 'run_id');
export const CLUSTER_RUNS = trackedRecord('cluster_runs', 'run_id');

/** An analysis run as read (`SELECT *`): its tracked columns, kinds and parameters narrowed. */
export type AnalysisRunRow = NarrowedRow<
  Selectable<DB['analysis_runs']>,
  TrackedColumns & { kinds: AnalysisKind[]; params: Record<string, unknown> }
>;

export type ClusterRunRow = NarrowedRow<
  Selectable<DB['cluster_runs']>,
  TrackedColumns & { params: Record<string, unknown>; result: Record<string, unknown> | null }
>;

/** A row of a version as `dataset_version_rows()` (the datasets family's) answers it, its dimension values as `dims`. */
export type VersionRow = NarrowedRow<
  Pick<Selectable<DB['dataset_rows']>, 'row_id' | 'ordinal' | 'data'>,
  { data: Record<string, unknown> }
> & { dims: Record<string, string> };

export type RowPropertiesRow = NarrowedRow<
  Pick<Selectable<DB['analysis_row_properties']>, 'row_id' | 'props'>,
  { props: Record<string, unknown> }
>;

type Table = 'analysis_runs' | 'cluster_runs';

/** The query language's context over a run's row properties, alias `p` (rows have no dimensions there). */
export function rowPropertiesContext(columns: Iterable<string>): FilterContext {
  return {
    row: sql.ref('p.props'),
    rowId: sql.ref<string>('p.row_id'),
    dimension: () => sql<string | null>`NULL`,
    columns: new Set(columns),
  };
}

/** Analysis and cluster runs, their results and per-row properties: queries only. */
@Injectable()
export class AnalysisRepository {
  constructor(private readonly db: Db) {}

  async insertRun<T extends Table>(
    table: T,
    run: {
      workspace_id: string;
      dataset_id: string;
      version_id: string;
      params: Record<string, unknown>;
      created_by: string | null;
      kinds?: AnalysisKind[];
    },
  ): Promise<string> {
    const values = {
      workspace_id: run.workspace_id,
      dataset_id: run.dataset_id,
      version_id: run.version_id,
      params: JSON.stringify(run.params),
      created_by: run.created_by,
    };
    const [{ id }] = await this.db.typed((q) =>
      table === 'analysis_runs'
        ? q
            .insertInto('analysis_runs')
            .values({ ...values, kinds: run.kinds ?? [] })
            .returning('id')
        : q.insertInto('cluster_runs').values(values).returning('id'),
    );
    return id;
  }

  /** A cluster run's result (its state is the queue's: `TrackedRecords`). */
  async saveClusterResult(id: string, result: Record<string, unknown>): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('cluster_runs')
        .set({ result: JSON.stringify(result) })
        .where('id', '=', id),
    );
  }

  find(table: 'analysis_runs', id: string): Promise<AnalysisRunRow | null>;
  find(table: 'cluster_runs', id: string): Promise<ClusterRunRow | null>;
  async find(table: Table, id: string): Promise<AnalysisRunRow | ClusterRunRow | null> {
    const rows = await this.db.typed((q) =>
      q.selectFrom(table).selectAll().where('id', '=', id).$castTo<AnalysisRunRow | ClusterRunRow>(),
    );
    return rows[0] ?? null;
  }

  list(table: Table, versionId: string, limit: number): Promise<Array<AnalysisRunRow | ClusterRunRow>> {
    return this.db.typed((q) =>
      q
        .selectFrom(table)
        .selectAll()
        .where('version_id', '=', versionId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .$castTo<AnalysisRunRow | ClusterRunRow>(),
    );
  }

  /** The newest succeeded analysis run of the version that computed `kind`. */
  async latestWith(versionId: string, kind: AnalysisKind): Promise<AnalysisRunRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('analysis_runs')
        .selectAll()
        .where('version_id', '=', versionId)
        .where('state', '=', 'succeeded')
        .where((eb) => eb(eb.val<string>(kind), '=', eb.fn.any('kinds')))
        .orderBy('finished_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .$castTo<AnalysisRunRow>(),
    );
    return rows[0] ?? null;
  }

  async latestCluster(versionId: string): Promise<ClusterRunRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('cluster_runs')
        .selectAll()
        .where('version_id', '=', versionId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .$castTo<ClusterRunRow>(),
    );
    return rows[0] ?? null;
  }

  async saveResult(runId: string, kind: AnalysisKind, result: Record<string, unknown>): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('analysis_results')
        .values({ run_id: runId, kind, result: JSON.stringify(result) })
        .onConflict((oc) =>
          oc.columns(['run_id', 'kind']).doUpdateSet((eb) => ({ result: eb.ref('excluded.result') })),
        ),
    );
  }

  async result(runId: string, kind: AnalysisKind): Promise<Record<string, unknown> | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('analysis_results')
        .select('result')
        .where('run_id', '=', runId)
        .where('kind', '=', kind)
        .$castTo<{ result: Record<string, unknown> }>(),
    );
    return rows[0]?.result ?? null;
  }

  /** Per-row properties, written a batch at a time (a batch is one jsonb parameter, unpacked by jsonb_to_recordset). */
  async saveRowProperties(
    runId: string,
    kind: AnalysisKind,
    rows: Array<{ row_id: string; ordinal: number; props: Record<string, unknown> }>,
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += 2000) {
      await this.db.query(
        `INSERT INTO analysis_row_properties (run_id, kind, row_id, ordinal, props)
         SELECT $1, $2, r.row_id, r.ordinal, r.props FROM jsonb_to_recordset($3::jsonb) AS r(row_id uuid, ordinal bigint, props jsonb)
         ON CONFLICT (run_id, kind, row_id) DO UPDATE SET props = excluded.props`,
        [runId, kind, JSON.stringify(rows.slice(i, i + 2000))],
      );
    }
  }

  /** A page of the run's rows of `kind` whose properties match a compiled query over `p` (rowPropertiesContext). */
  queryRowProperties(
    runId: string,
    kind: AnalysisKind,
    query: RowQuery,
    limit: number,
    offset: number,
  ): Promise<RowPropertiesRow[]> {
    return this.db.typed((q) =>
      orderedBy(
        q
          .selectFrom('analysis_row_properties as p')
          .select(['p.row_id', 'p.props'])
          .where('p.run_id', '=', runId)
          .where('p.kind', '=', kind)
          .$if(!!query.where, (w) => w.where(grouped(query.where!))),
        query.orderBy,
      )
        .orderBy('p.ordinal')
        .limit(limit)
        .offset(offset)
        .$castTo<RowPropertiesRow>(),
    );
  }

  /** The rows of a version in order (up to `limit`), with their dimension values. */
  versionRows(datasetId: string, versionNumber: number, limit: number): Promise<VersionRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom(publishedRows(datasetId, versionNumber))
        .select(['r.row_id', 'r.ordinal', 'r.data', 'r.dimensions as dims'])
        .orderBy('r.ordinal')
        .limit(limit),
    );
  }
}
