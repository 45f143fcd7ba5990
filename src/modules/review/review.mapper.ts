import type {
  FinalLabelResponse,
  ReviewItemResponse,
  ReviewExportResponse,
  ReviewLabelResponse,
  ReviewQueueResponse,
  ReviewSourceKind,
  RubricVersionResponse,
} from './dto/review.dto.js';
import type { ItemRow, ItemState, LabelRow, QueueRow, RubricRow } from './review.repository.js';

export function toRubricResponse(r: RubricRow): RubricVersionResponse {
  return { version: r.version, fields: r.fields, created_by: r.created_by, created_at: r.created_at };
}

export function toQueueResponse(
  q: QueueRow,
  rubric: RubricRow,
  counts: Record<ItemState, number> = { pending: 0, final: 0, disagreement: 0 },
): ReviewQueueResponse {
  return {
    id: q.id,
    workspace_id: q.workspace_id,
    name: q.name,
    description: q.description,
    state: q.state as 'open' | 'closed',
    source: { kind: q.source_kind as ReviewSourceKind, id: q.source_id },
    overlap: q.overlap,
    reviewers: q.reviewers,
    adjudicators: q.adjudicators ?? [],
    lease_minutes: Math.round(q.lease_seconds / 60),
    show_verdicts: q.show_verdicts,
    rubric: toRubricResponse(rubric),
    items: { total: counts.pending + counts.final + counts.disagreement, ...counts },
    created_by: q.created_by,
    created_at: q.created_at,
    updated_at: q.updated_at,
  };
}

/** What an item's context keeps from its run only when the queue shows verdicts. */
const VERDICT_KEYS = new Set(['passed', 'scores']);

/** An item as people see it: the run's verdicts and scores only where the queue shows them (`show_verdicts`). */
export function toItemResponse(i: ItemRow, runId: string | null, showVerdicts: boolean): ReviewItemResponse {
  return {
    id: i.id,
    queue_id: i.queue_id,
    ref: i.ref,
    run_id: runId,
    context: showVerdicts
      ? i.context
      : Object.fromEntries(Object.entries(i.context).filter(([k]) => !VERDICT_KEYS.has(k))),
    state: i.state,
    labelled: i.labelled,
    final_label: i.final_label,
    final_source: i.final_source,
    created_at: i.created_at,
  };
}

export function toLabelResponse(l: LabelRow): ReviewLabelResponse {
  return {
    id: l.id,
    item_id: l.item_id,
    reviewer_id: l.reviewer_id,
    kind: l.kind,
    values: l.values,
    reason: l.reason,
    rubric_version: l.rubric_version,
    history: l.history.map((h) => ({ values: h.values ?? {}, by: h.by, at: h.at })),
    created_at: l.created_at,
    updated_at: l.updated_at,
  };
}

export function toFinalLabelResponse(i: ItemRow, runId: string | null): FinalLabelResponse {
  return {
    item_id: i.id,
    ref: i.ref,
    run_id: runId,
    values: i.final_label ?? {},
    source: i.final_source ?? 'consensus',
    rubric_version: i.final_rubric_version ?? 1,
    finalised_at: i.finalised_at ?? i.created_at,
  };
}

/** An export's answer: the dataset, the version written (null when nothing was), and the counts. */
export function toExportResponse(
  datasetId: string,
  version: { id: string; number: number } | null,
  rows: number,
  alreadyExported: number,
  missingRows: string[],
): ReviewExportResponse {
  return {
    dataset_id: datasetId,
    version_id: version?.id ?? null,
    version_number: version?.number ?? null,
    rows,
    already_exported: alreadyExported,
    missing_rows: missingRows,
  };
}
