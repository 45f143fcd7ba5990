import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';
import { trackedRecord, type TrackedColumns } from '../../../libs/queue/tracked-job.js';

export type AnalysisKind = 'text' | 'annotation' | 'visual';

/** The records analysis and cluster jobs settle (their `run_id`): the queue keeps their tracked columns. */
export const ANALYSIS_RUNS = trackedRecord('analysis_runs', 'run_id');
export const CLUSTER_RUNS = trackedRecord('cluster_runs', 'run_id');

export interface AnalysisRunRow extends TrackedColumns {
  id: string;
  workspace_id: string;
  dataset_id: string;
  version_id: string;
  kinds: AnalysisKind[];
  params: Record<string, unknown>;
  created_by: string | null;
}

export interface ClusterRunRow extends Omit<AnalysisRunRow, 'kinds'> {
  result: Record<string, unknown> | null;
}

type Table = 'analysis_runs' | 'cluster_runs';

/** Analysis and cluster runs, their results and per-row properties: queries only. */
@Injectable()
export class AnalysisRepository {
  constructor(private readonly db: Db) {}

  private m() {
    return this.db.manager;
  }

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
    const kinds = table === 'analysis_runs' ? ', kinds' : '';
    const values = table === 'analysis_runs' ? ', $6' : '';
    const rows: Array<{ id: string }> = await this.db.query(
      `INSERT INTO ${table} (workspace_id, dataset_id, version_id, params, created_by${kinds}) VALUES ($1, $2, $3, $4, $5${values}) RETURNING id`,
      [
        run.workspace_id,
        run.dataset_id,
        run.version_id,
        JSON.stringify(run.params),
        run.created_by,
        ...(table === 'analysis_runs' ? [run.kinds] : []),
      ],
    );
    return rows[0].id;
  }

  /** A cluster run's result (its state is the queue's: `TrackedRecords`). */
  async saveClusterResult(id: string, result: Record<string, unknown>): Promise<void> {
    await this.db.query('UPDATE cluster_runs SET result = $2 WHERE id = $1', [id, JSON.stringify(result)]);
  }

  find(table: 'analysis_runs', id: string): Promise<AnalysisRunRow | null>;
  find(table: 'cluster_runs', id: string): Promise<ClusterRunRow | null>;
  async find(table: Table, id: string): Promise<AnalysisRunRow | ClusterRunRow | null> {
    const rows = await this.db.query(`SELECT * FROM ${table} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  list(table: Table, versionId: string, limit: number): Promise<Array<AnalysisRunRow | ClusterRunRow>> {
    return this.db.query(`SELECT * FROM ${table} WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [
      versionId,
      limit,
    ]);
  }

  /** The newest succeeded analysis run of the version that computed `kind`. */
  async latestWith(versionId: string, kind: AnalysisKind): Promise<AnalysisRunRow | null> {
    const rows: AnalysisRunRow[] = await this.db.query(
      `SELECT * FROM analysis_runs WHERE version_id = $1 AND state = 'succeeded' AND $2 = ANY(kinds) ORDER BY finished_at DESC, id DESC LIMIT 1`,
      [versionId, kind],
    );
    return rows[0] ?? null;
  }

  async latestCluster(versionId: string): Promise<ClusterRunRow | null> {
    const rows: ClusterRunRow[] = await this.db.query(
      'SELECT * FROM cluster_runs WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
      [versionId],
    );
    return rows[0] ?? null;
  }

  async saveResult(runId: string, kind: AnalysisKind, result: Record<string, unknown>): Promise<void> {
    await this.db.query(
      'INSERT INTO analysis_results (run_id, kind, result) VALUES ($1, $2, $3) ON CONFLICT (run_id, kind) DO UPDATE SET result = excluded.result',
      [runId, kind, JSON.stringify(result)],
    );
  }

  async result(runId: string, kind: AnalysisKind): Promise<Record<string, unknown> | null> {
    const rows: Array<{ result: Record<string, unknown> }> = await this.db.query(
      'SELECT result FROM analysis_results WHERE run_id = $1 AND kind = $2',
      [runId, kind],
    );
    return rows[0]?.result ?? null;
  }

  /** Per-row properties, written a batch at a time. */
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

  /** A page of rows whose properties match a compiled filter over `p` (`$1` run, `$2` kind). */
  async queryRowProperties(
    where: string,
    orderBy: string | undefined,
    params: unknown[],
    limit: number,
    offset: number,
  ): Promise<Array<{ row_id: string; props: Record<string, unknown> }>> {
    return this.db.query(
      `SELECT p.row_id, p.props FROM analysis_row_properties p WHERE p.run_id = $1 AND p.kind = $2 AND (${where}) ORDER BY ${orderBy ? `${orderBy}, ` : ''}p.ordinal LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      params,
    );
  }

  /** The rows of a version in order (up to `limit`), with their dimension values. */
  versionRows(
    datasetId: string,
    versionNumber: number,
    limit: number,
  ): Promise<Array<{ row_id: string; ordinal: string; data: Record<string, unknown>; dims: Record<string, string> }>> {
    return this.db.query(
      `SELECT r.row_id, r.ordinal, r.data, r.dimensions AS dims FROM dataset_version_rows($1, $2) r ORDER BY r.ordinal LIMIT $3`,
      [datasetId, versionNumber, limit],
    );
  }
}
