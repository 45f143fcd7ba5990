import type { GateVerdict, GateVerdictResponse } from './dto/gate-verdict.dto.js';
import type { RunItemResultDto } from './dto/results.dto.js';
import type { GateVerdictRow } from './gate/gate-verdicts.repository.js';
import type { RunEntity } from './entities/run.entity.js';
import type { RunEventRow, RunItemRow } from './runs.repository.js';
import type { RunEventResponse, RunResponse } from './dto/run.dto.js';

export function itemDto(i: RunItemRow): RunItemResultDto {
  return {
    row_id: i.row_id,
    repetition: i.repetition,
    session_id: i.session_id,
    turn: i.turn,
    status: i.status,
    row: i.data,
    output: i.output,
    latency_ms: i.latency_ms,
    usage: i.usage,
    cost_usd: i.cost_usd,
    extras: i.extras,
    error: i.error,
    trajectory: i.trajectory,
    trace_id: i.trace_id,
    scores: i.scores ?? {},
    passed: i.passed,
    dimensions: i.dimensions,
  };
}

export function toEventResponse(e: RunEventRow): RunEventResponse {
  return { seq: Number(e.id), type: e.type, at: e.at, data: e.data };
}

export function toRunResponse(
  r: RunEntity,
  counts?: { total: number; completed: number; errored: number; pending: number },
): RunResponse {
  const total = counts?.total ?? r.total;
  const completed = counts?.completed ?? r.completed;
  const errored = counts?.errored ?? r.errored;
  const pending = counts?.pending ?? Math.max(0, total - completed - errored);
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    name: r.name,
    state: r.state,
    state_reason: r.stateReason,
    dataset_id: r.datasetId,
    version_id: r.versionId,
    partition_id: r.partitionId,
    sut_id: r.sutId,
    connection_id: r.connectionId,
    connection_kind: r.snapshot.connection.spec.kind,
    adapter_revision: r.snapshot.adapter.revision,
    eval_config_id: r.evalConfigId,
    metrics: r.snapshot.metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      metric: m.metric,
      source: m.source,
      config_name: m.config?.name ?? null,
      config_version: m.config?.version ?? null,
      threshold: m.threshold,
      judge_id: m.judge?.id ?? null,
      gating: m.gating,
      min_pass_rate: m.min_pass_rate,
    })),
    pass_rule: r.snapshot.pass_rule,
    concurrency: r.concurrency,
    sample: r.sample,
    repetitions: r.repetitions,
    tags: r.tags,
    rerun_of: r.rerunOf,
    rerun_mode: r.rerunMode,
    progress: {
      total,
      completed,
      errored,
      pending,
      percent: total ? Math.round(((total - pending) / total) * 1000) / 10 : 0,
    },
    passed: r.passed,
    summary: r.summary as unknown as Record<string, unknown> | null,
    cancel_requested: r.cancelRequestedAt !== null,
    job_id: r.jobId,
    created_by: r.createdBy,
    created_at: r.createdAt,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    updated_at: r.updatedAt,
  };
}

/** A recorded gate verdict's response. */
export function toGateVerdictResponse(row: GateVerdictRow): GateVerdictResponse {
  return {
    id: row.id,
    run_id: row.run_id,
    label: row.label,
    project_id: row.project_id,
    test_plan_id: row.test_plan_id,
    test_plan_name: row.test_plan_name,
    test_plan_version: row.test_plan_version,
    baseline_run_id: row.baseline_run_id,
    alpha: row.alpha,
    min_rows: row.min_rows,
    verdict: row.verdict as GateVerdict,
    failures: row.failures,
    warnings: row.warnings,
    passed: row.passed,
    skipped: row.skipped,
    recorded_by: row.recorded_by,
    recorded_at: row.recorded_at.toISOString(),
  };
}
