import type {
  BackfillResponse,
  EvaluatorSpecResponse,
  EvaluatorTargetResponse,
  EvaluatorVersionResponse,
  OnlineEvaluatorResponse,
} from './dto/online.dto.js';
import type { TargetMappingDto } from '../traces/dto/span-mapping.dto.js';
import type { BackfillRow, EvaluatorRow, TargetCounts, TargetRow } from './online.repository.js';
import type { EvaluatorSpec } from './online.rules.js';

export function toSpecResponse(spec: EvaluatorSpec): EvaluatorSpecResponse {
  return {
    level: spec.level,
    filter: spec.filter,
    sampling_rate: spec.sampling_rate,
    metrics: spec.metrics.map((m) => ({ name: m.name, threshold: m.threshold })),
    judge_id: spec.judge_id,
    mapping: spec.mapping as TargetMappingDto,
    quiet_seconds: spec.quiet_seconds,
    budget: { ...spec.budget },
    route: spec.route ? { ...spec.route } : null,
  };
}

export function toEvaluatorResponse(
  e: EvaluatorRow,
  spec: EvaluatorSpec,
  counts: TargetCounts,
): OnlineEvaluatorResponse {
  return {
    id: e.id,
    workspace_id: e.workspace_id,
    dataset_id: e.dataset_id,
    name: e.name,
    description: e.description,
    state: e.state as OnlineEvaluatorResponse['state'],
    status: e.status as OnlineEvaluatorResponse['status'],
    status_detail: e.status_detail,
    status_since: e.status_since,
    version: e.version,
    spec: toSpecResponse(spec),
    progress: {
      cursor_ordinal: Number(e.cursor_ordinal),
      spans_read: Number(e.spans_read),
      traces_seen: Number(e.traces_seen),
      targets_sampled: Number(e.targets_sampled),
    },
    targets: counts,
    created_by: e.created_by,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function toVersionResponse(v: {
  version: number;
  spec: unknown;
  created_by: string | null;
  created_at: Date;
}): EvaluatorVersionResponse {
  return {
    version: v.version,
    spec: toSpecResponse(v.spec as EvaluatorSpec),
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

export function toTargetResponse(t: TargetRow): EvaluatorTargetResponse {
  return {
    target_key: t.target_key,
    evaluator_version: t.evaluator_version,
    level: t.level as EvaluatorTargetResponse['level'],
    trace_id: t.trace_id,
    span_id: t.span_id,
    session_id: t.session_id,
    origin: t.origin as EvaluatorTargetResponse['origin'],
    backfill_id: t.backfill_id,
    state: t.state as EvaluatorTargetResponse['state'],
    reason: t.reason,
    complete: t.complete,
    attempts: t.attempts,
    created_at: t.created_at,
    finished_at: t.finished_at,
  };
}

export function toBackfillResponse(b: BackfillRow, counts: TargetCounts): BackfillResponse {
  return {
    id: b.id,
    evaluator_id: b.evaluator_id,
    evaluator_version: b.evaluator_version,
    from: b.from_time,
    to: b.to_time,
    state: b.state as BackfillResponse['state'],
    failure: (b.failure as BackfillResponse['failure']) ?? null,
    progress: { spans_read: Number(b.spans_read), targets_sampled: b.targets_sampled, targets: counts },
    created_by: b.created_by,
    created_at: b.created_at,
    started_at: b.started_at,
    finished_at: b.finished_at,
  };
}
