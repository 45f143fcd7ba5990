import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';

export type AnalysisKind = 'text' | 'annotation' | 'visual';
export type RunState = 'queued' | 'running' | 'succeeded' | 'failed';

export interface AnalysisRunRow {
  id: string;
  workspace_id: string;
  dataset_id: string;
  version_id: string;
  kinds: AnalysisKind[];
  state: RunState;
  state_reason: string | null;
  params: Record<string, unknown>;
  progress: Record<string, unknown> | null;
  job_id: string | null;
  created_by: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
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

  async insertRun<T extends Table>(table: T, run: { workspace_id: string; dataset_id: string; version_id: string; params: Record<string, unknown>; created_by: string | null; kinds?: AnalysisKind[] }): Promise<string> {
    const kinds = table === 'analysis_runs' ? ', kinds' : '';
    const values = table === 'analysis_runs' ? ', $6' : '';
    const rows: Array<{ id: string }> = await this.db.query(
      `INSERT INTO ${table} (workspace_id, dataset_id, version_id, state, params, created_by${kinds}) VALUES ($1, $2, $3, 'queued', $4, $5${values}) RETURNING id`,
      [run.workspace_id, run.dataset_id, run.version_id, JSON.stringify(run.params), run.created_by, ...(table === 'analysis_runs' ? [run.kinds] : [])],
    );
    return rows[0].id;
  }

  async setJob(table: Table, id: string, jobId: string): Promise<void> {
    await this.db.query(`UPDATE ${table} SET job_id = $2 WHERE id = $1`, [id, jobId]);
  }

  async setState(table: Table, id: string, state: RunState, fields: { reason?: string | null; progress?: Record<string, unknown> | null; result?: Record<string, unknown> } = {}): Promise<void> {
    const result = table === 'cluster_runs' && fields.result !== undefined ? ', result = $5' : '';
    await this.db.query(
      `UPDATE ${table} SET state = $2, state_reason = coalesce($3, state_reason), progress = coalesce($4, progress),
              started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
              finished_at = CASE WHEN $2 IN ('succeeded', 'failed') THEN now() ELSE finished_at END${result}
        WHERE id = $1`,
      [id, state, fields.reason ?? null, fields.progress === undefined || fields.progress === null ? null : JSON.stringify(fields.progress), ...(result ? [JSON.stringify(fields.result)] : [])],
    );
  }

  find(table: 'analysis_runs', id: string): Promise<AnalysisRunRow | null>;
  find(table: 'cluster_runs', id: string): Promise<ClusterRunRow | null>;
  async find(table: Table, id: string): Promise<AnalysisRunRow | ClusterRunRow | null> {
    const rows = await this.db.query(`SELECT * FROM ${table} WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  list(table: Table, versionId: string, limit: number): Promise<Array<AnalysisRunRow | ClusterRunRow>> {
    return this.db.query(`SELECT * FROM ${table} WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [versionId, limit]);
  }

  /** The newest succeeded analysis run of the version that computed `kind`. */
  async latestWith(versionId: string, kind: AnalysisKind): Promise<AnalysisRunRow | null> {
    const rows: AnalysisRunRow[] = await this.db.query(`SELECT * FROM analysis_runs WHERE version_id = $1 AND state = 'succeeded' AND $2 = ANY(kinds) ORDER BY finished_at DESC, id DESC LIMIT 1`, [versionId, kind]);
    return rows[0] ?? null;
  }

  async latestCluster(versionId: string): Promise<ClusterRunRow | null> {
    const rows: ClusterRunRow[] = await this.db.query('SELECT * FROM cluster_runs WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [versionId]);
    return rows[0] ?? null;
  }

  async saveResult(runId: string, kind: AnalysisKind, result: Record<string, unknown>): Promise<void> {
    await this.db.query('INSERT INTO analysis_results (run_id, kind, result) VALUES ($1, $2, $3) ON CONFLICT (run_id, kind) DO UPDATE SET result = excluded.result', [runId, kind, JSON.stringify(result)]);
  }

  async result(runId: string, kind: AnalysisKind): Promise<Record<string, unknown> | null> {
    const rows: Array<{ result: Record<string, unknown> }> = await this.db.query('SELECT result FROM analysis_results WHERE run_id = $1 AND kind = $2', [runId, kind]);
    return rows[0]?.result ?? null;
  }

  /** Per-row properties, written a batch at a time. */
  async saveRowProperties(runId: string, kind: AnalysisKind, rows: Array<{ row_id: string; ordinal: number; props: Record<string, unknown> }>): Promise<void> {
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
  async queryRowProperties(where: string, orderBy: string | undefined, params: unknown[], limit: number, offset: number): Promise<Array<{ row_id: string; props: Record<string, unknown> }>> {
    return this.db.query(
      `SELECT p.row_id, p.props FROM analysis_row_properties p WHERE p.run_id = $1 AND p.kind = $2 AND (${where}) ORDER BY ${orderBy ? `${orderBy}, ` : ''}p.ordinal LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      params,
    );
  }

  /** The rows of a version in order (up to `limit`), with their dimension values. */
  versionRows(datasetId: string, versionNumber: number, limit: number): Promise<Array<{ row_id: string; ordinal: string; data: Record<string, unknown>; dims: Record<string, string> }>> {
    return this.db.query(
      `SELECT r.row_id, r.ordinal, r.data,
              (SELECT coalesce(jsonb_object_agg(d.dimension, d.value), '{}'::jsonb) FROM dataset_row_dimensions d WHERE d.dataset_id = r.dataset_id AND d.row_id = r.row_id) AS dims
         FROM dataset_rows r WHERE r.dataset_id = $1 AND r.added_in <= $2 AND (r.removed_in IS NULL OR r.removed_in > $2)
        ORDER BY r.ordinal LIMIT $3`,
      [datasetId, versionNumber, limit],
    );
  }
}
