import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';
import { trackedRecord, type TrackedColumns } from '../../../libs/queue/tracked-job.js';

/** Data-operation runs run in the request (no job), but keep the tracked columns all background operations keep. */
export const DATA_OPERATION_RUNS = trackedRecord('data_operation_runs', 'run_id');

export interface OperationRunRow<R> extends TrackedColumns {
  id: string;
  dataset_id: string;
  version_id: string;
  kind: string;
  params: Record<string, unknown>;
  verdict: 'pass' | 'warn' | 'fail' | null;
  result: R | null;
  created_by: string | null;
}

const COLUMNS =
  'id, dataset_id, version_id, kind, state, params, verdict, result, failure, progress, job_id, created_by, created_at, started_at, finished_at';

/** Data-operation runs (quality checks) of dataset versions: each run is kept with its verdict. */
@Injectable()
export class QualityRepository {
  constructor(private readonly db: Db) {}

  /** A new run (queued: `TrackedRecords` starts and ends it). */
  async insert<R>(run: {
    workspaceId: string;
    datasetId: string;
    versionId: string;
    kind: string;
    params: unknown;
    createdBy: string;
  }): Promise<OperationRunRow<R>> {
    const [row]: Array<OperationRunRow<R>> = await this.db.query(
      `INSERT INTO data_operation_runs (workspace_id, dataset_id, version_id, kind, params, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [run.workspaceId, run.datasetId, run.versionId, run.kind, JSON.stringify(run.params), run.createdBy],
    );
    return row;
  }

  async saveVerdict(id: string, verdict: string, result: unknown): Promise<void> {
    await this.db.query('UPDATE data_operation_runs SET verdict = $2, result = $3 WHERE id = $1', [
      id,
      verdict,
      JSON.stringify(result),
    ]);
  }

  async latestSucceeded<R>(versionId: string, kind: string): Promise<OperationRunRow<R> | undefined> {
    const [row]: Array<OperationRunRow<R>> = await this.db.query(
      `SELECT ${COLUMNS} FROM data_operation_runs WHERE version_id = $1 AND kind = $2 AND state = 'succeeded' ORDER BY created_at DESC, id DESC LIMIT 1`,
      [versionId, kind],
    );
    return row;
  }

  /** The newest successful result of every version of the dataset, newest version first. */
  async latestPerVersion<R>(datasetId: string, kind: string): Promise<R[]> {
    const rows: Array<{ result: R }> = await this.db.query(
      `SELECT latest.result FROM (
         SELECT DISTINCT ON (o.version_id) o.result, v.number
           FROM data_operation_runs o JOIN dataset_versions v ON v.id = o.version_id
          WHERE o.dataset_id = $1 AND o.kind = $2 AND o.state = 'succeeded'
          ORDER BY o.version_id, o.created_at DESC, o.id DESC
       ) latest ORDER BY latest.number DESC`,
      [datasetId, kind],
    );
    return rows.map((r) => r.result);
  }

  async page<R>(
    versionId: string,
    window: { skip: number; take: number },
  ): Promise<[Array<OperationRunRow<R>>, number]> {
    const rows: Array<OperationRunRow<R>> = await this.db.query(
      `SELECT ${COLUMNS} FROM data_operation_runs WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [versionId, window.take, window.skip],
    );
    const [{ n }]: Array<{ n: number }> = await this.db.query(
      'SELECT count(*)::int AS n FROM data_operation_runs WHERE version_id = $1',
      [versionId],
    );
    return [rows, n];
  }

  async find<R>(versionId: string, id: string): Promise<OperationRunRow<R> | undefined> {
    const [row]: Array<OperationRunRow<R>> = await this.db.query(
      `SELECT ${COLUMNS} FROM data_operation_runs WHERE id = $1 AND version_id = $2`,
      [id, versionId],
    );
    return row;
  }
}
