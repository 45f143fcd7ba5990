import { failureObject } from '#libs/queue/dto/tracked-run.dto.js';
import { JOB_STATE_VOCABULARY } from '#libs/queue/tracked-job.js';
import { ENRICHMENT_FIELDS } from '#libs/traces/enrichment.js';
import { wilsonInterval } from '#libs/evaluation/statistics/judge-validity.js';
import { tMeanInterval } from '#libs/evaluation/statistics/mean-interval.js';
import type {
  TraceDropRecordResponse,
  TraceIngestRunResponse,
  TraceSourceConnectionResponse,
  TraceUploadResponse,
} from './dto/traces.dto.js';
import type { TraceEnrichmentStatusResponse, TraceGroundTruthVersionResponse } from './dto/trace-data.dto.js';
import { LIVE_MAX_SPANS, LIVE_WINDOW_SECONDS, type TraceLiveStreamResponse } from './dto/live.dto.js';
import type { FeedbackValue, TraceFeedbackResponse, TraceFeedbackSummary } from './dto/feedback.dto.js';
import type { TraceScoreBucket, TraceScoreOfTrace, TraceScoreResponse } from './dto/scores.dto.js';
import type { ScoreAggregateCounts, TraceScoreRow } from './scores/scores.repository.js';
import type { FeedbackCounts, FeedbackRow, NewFeedbackRow } from './feedback/feedback.repository.js';
import type { LiveStreamRow } from './live.repository.js';
import type { SpanTreePage } from './dto/span-tree.dto.js';
import type { TreeCursor, TreeRow } from '../datasets/tree-rows.types.js';
import type {
  DropRow,
  EnrichmentRunRow,
  GroundTruthRow,
  IngestRunRow,
  TraceConnectionRow,
  TraceUploadRow,
} from './traces.repository.js';

export function toGroundTruthVersion(row: GroundTruthRow): TraceGroundTruthVersionResponse {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    version_id: row.version_id,
    number: row.number,
    item_count: row.item_count,
    message: row.message,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

export function toStatus(
  datasetId: string,
  versionId: string,
  run: EnrichmentRunRow | null,
): TraceEnrichmentStatusResponse {
  const fields = ENRICHMENT_FIELDS.map((f) => ({ name: String(f.name), type: f.type, description: f.description }));
  if (!run)
    return {
      dataset_id: datasetId,
      version_id: versionId,
      state: 'not_started',
      run_id: null,
      traces_total: 0,
      traces_done: 0,
      progress: 0,
      prices: null,
      error: null,
      started_at: null,
      finished_at: null,
      fields,
    };
  const total = Number(run.progress?.total ?? 0);
  const done = Number(run.progress?.done ?? 0);
  return {
    dataset_id: datasetId,
    version_id: versionId,
    state: JOB_STATE_VOCABULARY.show(run.state),
    run_id: run.id,
    traces_total: total,
    traces_done: done,
    progress: run.state === 'succeeded' ? 1 : total ? Math.min(1, done / total) : 0,
    prices: run.prices,
    error: failureObject(run.failure),
    started_at: run.started_at,
    finished_at: run.finished_at,
    fields,
  };
}

export function toConnection(row: TraceConnectionRow): TraceSourceConnectionResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    kind: row.kind,
    url: row.url,
    secret_id: row.secret_id,
    public_key_secret_id: row.public_key_secret_id,
    project: row.kind === 'phoenix' ? (row.settings.project ?? 'default') : null,
    page_size: row.settings.page_size ?? 100,
    dataset_id: row.dataset_id,
    created_by: row.created_by,
    created_at: row.created_at,
    last_landed_at: row.last_landed_at,
  };
}

export function toUpload(row: TraceUploadRow): TraceUploadResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    filename: row.filename,
    format: row.format,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

export function toRun(row: IngestRunRow): TraceIngestRunResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    state: JOB_STATE_VOCABULARY.show(row.state),
    source: { kind: row.source_kind, upload_id: row.upload_id, connection_id: row.connection_id },
    dataset_id: row.dataset_id,
    version_id: row.version_id,
    convention: row.options.convention ?? 'auto',
    keep_unmapped: row.options.keep_unmapped !== false,
    counts: {
      received: row.received,
      landed: row.landed,
      deduplicated: row.deduplicated,
      dropped: row.dropped,
      pending: row.pending ?? 0,
    },
    drop_reasons: row.drop_reasons,
    conventions: row.conventions,
    traces: row.traces,
    error: failureObject(row.failure),
    job_id: row.job_id,
    created_by: row.created_by,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

export function toDrop(row: DropRow): TraceDropRecordResponse {
  return {
    id: row.id,
    run_id: row.run_id,
    version_id: row.version_id,
    ordinal: row.ordinal,
    reason: row.reason,
    detail: row.detail,
    source_ref: row.source_ref,
    payload: row.payload,
    created_at: row.created_at,
  };
}

/** A live stream with its head version's number (null without a head). */
export function toLiveStreamResponse(stream: LiveStreamRow, headVersionNumber: number | null): TraceLiveStreamResponse {
  return {
    dataset_id: stream.dataset_id,
    workspace_id: stream.workspace_id,
    ingest_run_id: stream.ingest_run_id,
    head_version_id: stream.head_version_id,
    head_version_number: headVersionNumber,
    head_opened_at: stream.head_opened_at,
    head_seals_at: stream.head_opened_at
      ? new Date(stream.head_opened_at.getTime() + stream.window_seconds * 1000)
      : null,
    head_spans: stream.head_spans,
    window_seconds: stream.window_seconds,
    max_spans: stream.max_spans,
    pending_spans: stream.pending,
    last_received_at: stream.last_received_at,
    last_landed_at: stream.last_landed_at,
    created_at: stream.created_at,
  };
}

/** A trace dataset that has received no span over OTLP and has no settings: the defaults it would stream with. */
export function idleLiveStreamResponse(workspaceId: string, datasetId: string): TraceLiveStreamResponse {
  return {
    dataset_id: datasetId,
    workspace_id: workspaceId,
    ingest_run_id: null,
    head_version_id: null,
    head_version_number: null,
    head_opened_at: null,
    head_seals_at: null,
    head_spans: 0,
    window_seconds: LIVE_WINDOW_SECONDS.default,
    max_spans: LIVE_MAX_SPANS.default,
    pending_spans: 0,
    last_received_at: null,
    last_landed_at: null,
    created_at: null,
  };
}

// Feedback

type FeedbackFields = Pick<
  FeedbackRow | NewFeedbackRow,
  | 'trace_id'
  | 'span_id'
  | 'name'
  | 'value_number'
  | 'value_boolean'
  | 'value_string'
  | 'comment'
  | 'user_ref'
  | 'metadata'
>;

function feedbackValue(row: Pick<FeedbackFields, 'value_number' | 'value_boolean' | 'value_string'>): FeedbackValue {
  return row.value_boolean ?? row.value_number ?? row.value_string ?? '';
}

/** What a retry must repeat for its client_key to answer the stored feedback: every member the caller sent. */
export function feedbackContent(row: FeedbackFields): Record<string, unknown> {
  return {
    trace_id: row.trace_id,
    span_id: row.span_id ?? null,
    name: row.name,
    value: feedbackValue(row),
    comment: row.comment ?? null,
    user_ref: row.user_ref ?? null,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : (row.metadata ?? {}),
  };
}

export function toFeedbackResponse(row: FeedbackRow, replayed: boolean): TraceFeedbackResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    name: row.name,
    value: feedbackValue(row),
    comment: row.comment,
    user_ref: row.user_ref,
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    client_key: row.client_key,
    created_by: row.created_by,
    created_at: row.created_at,
    replayed,
  };
}

/** Per trace id: its feedback by name (count, mean score or null, thumbs up and down). */
export function toFeedbackSummaries(counts: FeedbackCounts[]): Map<string, Record<string, TraceFeedbackSummary>> {
  const out = new Map<string, Record<string, TraceFeedbackSummary>>();
  for (const c of counts) {
    const byName = out.get(c.trace_id) ?? {};
    byName[c.name] = {
      count: Number(c.count),
      mean: c.mean === null ? null : Number(c.mean),
      thumbs_up: Number(c.thumbs_up),
      thumbs_down: Number(c.thumbs_down),
    };
    out.set(c.trace_id, byName);
  }
  return out;
}

export function toTraceScoreResponse(row: TraceScoreRow): TraceScoreResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    dataset_id: row.dataset_id,
    evaluator_id: row.evaluator_id,
    evaluator_name: row.evaluator_name,
    evaluator_version: row.evaluator_version,
    level: row.level,
    target_key: row.target_key,
    trace_id: row.trace_id,
    span_id: row.span_id,
    session_id: row.session_id,
    metric: row.metric,
    score: row.score,
    passed: row.passed,
    label: row.label,
    reason: row.reason,
    error: row.error,
    detail: row.detail as Record<string, unknown> | null,
    service_name: row.service_name,
    model: row.model,
    cost_usd: row.cost_usd,
    observed_at: row.observed_at,
    scored_at: row.scored_at,
  };
}

/**
 * One bucket of an aggregation: the counts as numbers, the pass rate over the records with a
 * verdict with Wilson's interval, the mean score with Student's t interval, at 95%.
 */
export function toScoreBucket(counts: ScoreAggregateCounts, end: Date): TraceScoreBucket {
  const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
  const [passed, failed, scored] = [Number(counts.passed), Number(counts.failed), Number(counts.scored)];
  const [mean, sd] = [num(counts.mean), num(counts.sd)];
  return {
    start: counts.bucket_start,
    end,
    group: counts.grp,
    n: Number(counts.n),
    scored,
    errored: Number(counts.errored),
    passed,
    failed,
    pass_rate: passed + failed ? passed / (passed + failed) : null,
    pass_rate_interval: wilsonInterval(passed, passed + failed),
    mean,
    mean_interval: mean === null ? null : tMeanInterval(mean, sd, scored),
    sd,
  };
}

/** Per trace id, per evaluator name and metric: its newest score record (`newest` holds one a trace, evaluator and metric). */
export function toTraceScoresOfTraces(
  newest: TraceScoreRow[],
): Map<string, Record<string, Record<string, TraceScoreOfTrace>>> {
  const out = new Map<string, Record<string, Record<string, TraceScoreOfTrace>>>();
  for (const row of newest) {
    if (row.trace_id === null) continue;
    const byEvaluator = out.get(row.trace_id) ?? {};
    byEvaluator[row.evaluator_name] = {
      ...byEvaluator[row.evaluator_name],
      [row.metric]: {
        score: row.score,
        passed: row.passed,
        label: row.label,
        evaluator_version: row.evaluator_version,
      },
    };
    out.set(row.trace_id, byEvaluator);
  }
  return out;
}

/**
 * A page of a span tree read: the rows asked for beyond `limit` say another page follows, and
 * `cursorAt` makes its cursor from the last item's place. Depth is answered only by a read by depth.
 */
export function toSpanTreePage(
  of: { datasetId: string; versionId: string; traceId: string },
  rows: TreeRow[],
  limit: number,
  cursorAt: (at: TreeCursor) => string,
): SpanTreePage {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    dataset_id: of.datasetId,
    version_id: of.versionId,
    trace_id: of.traceId,
    items: items.map((r) => ({ span: r.data, child_count: r.child_count, depth: r.depth })),
    next_cursor:
      rows.length > limit && last
        ? cursorAt({
            ...(last.depth !== null ? { depth: last.depth } : {}),
            sort: String(last.data.start_time ?? ''),
            id: String(last.data.span_id ?? ''),
          })
        : null,
  };
}
