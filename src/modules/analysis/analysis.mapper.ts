import { trackedRunFields } from '#libs/queue/dto/tracked-run.dto.js';
import type { AnalysisRunRow, ClusterRunRow } from './analysis.repository.js';
import { ANALYSIS_RUN_STATES, type AnalysisRunResponse, type DatasetClustersRun } from './dto/analysis.dto.js';

export function runResponse(r: AnalysisRunRow): AnalysisRunResponse {
  const { version_number: _n, mapped_input: _m, ...params } = r.params as Record<string, unknown>;
  const tracked = trackedRunFields(r, ANALYSIS_RUN_STATES, [
    'state',
    'state_reason',
    'progress',
    'job_id',
    'created_at',
    'started_at',
    'finished_at',
  ]);
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    dataset_id: r.dataset_id,
    version_id: r.version_id,
    kinds: r.kinds,
    ...tracked,
    params,
    created_by: r.created_by,
  };
}

export function clusterRunResponse(r: ClusterRunRow): DatasetClustersRun {
  const params = r.params as { column: string; k: number | null; seed: number };
  const result = r.result as { k: number; silhouette: number | null; rows: number; embedder: string } | null;
  return {
    id: r.id,
    dataset_id: r.dataset_id,
    version_id: r.version_id,
    ...trackedRunFields(r, ANALYSIS_RUN_STATES, [
      'state',
      'state_reason',
      'progress',
      'job_id',
      'created_at',
      'finished_at',
    ]),
    column: params.column,
    k_requested: params.k,
    seed: params.seed,
    embedder: result?.embedder ?? null,
    summary: result ? { k: result.k, silhouette: result.silhouette, rows: result.rows } : null,
  };
}
