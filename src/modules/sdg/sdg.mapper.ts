import { trackedRunFields } from '#libs/queue/dto/tracked-run.dto.js';
import { SDG_RUN_STATES, type SdgAdapterResponse, type SdgRunResponse } from './dto/sdg.dto.js';
import type { SdgAdapterEntity } from './entities/sdg-adapter.entity.js';
import type { SdgRunEntity } from './entities/sdg-run.entity.js';
import type { LlmSpec, TemplateSpec } from './sdg.types.js';

/** How many of an adapter's runs its response shows. */
export const RECENT_RUNS = 5;

export function runResponse(r: SdgRunEntity): SdgRunResponse {
  const tracked = trackedRunFields({ ...r.tracked, created_at: r.createdAt }, SDG_RUN_STATES, [
    'state',
    'state_reason',
    'job_id',
    'created_at',
    'finished_at',
  ]);
  return {
    id: r.id,
    adapter_id: r.adapterId,
    workspace_id: r.workspaceId,
    ...tracked,
    target_dataset_id: r.targetDatasetId,
    version_id: r.versionId,
    generated: r.generated,
    dropped: r.dropped,
    errors: r.errors,
    created_by: r.createdBy,
  };
}

export function toAdapterResponse(a: SdgAdapterEntity, runs: SdgRunEntity[]): SdgAdapterResponse {
  const llm = a.kind === 'llm' ? (a.spec as LlmSpec) : null;
  const template = a.kind === 'template' ? (a.spec as TemplateSpec) : null;
  return {
    id: a.id,
    workspace_id: a.workspaceId,
    name: a.name,
    description: a.description,
    kind: a.kind,
    columns: template?.columns ?? null,
    prompt: llm?.prompt ?? null,
    output_columns: llm?.columns ?? null,
    count: llm?.count ?? null,
    dimensions: a.spec.dimensions,
    dimension_columns: a.spec.dimension_columns,
    judge_id: a.judgeId,
    recent_runs: runs
      .filter((r) => r.adapterId === a.id)
      .slice(0, RECENT_RUNS)
      .map(runResponse),
    created_by: a.createdBy,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}
