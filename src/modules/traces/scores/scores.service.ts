import { Injectable } from '@nestjs/common';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import {
  SCORE_LIMITS,
  type TraceScoreAggregateResponse,
  type TraceScoreOfTrace,
  type TraceScoreResponse,
  type TraceScoresAggregateQuery,
  type TraceScoresQuery,
} from '../dto/scores.dto.js';
import { TraceDatasets } from '../trace-datasets.service.js';
import { TraceErrors } from '../traces.errors.js';
import { toScoreBucket, toTraceScoreResponse, toTraceScoresOfTraces } from '../traces.mapper.js';
import {
  type NewTraceScore,
  type ScoreWindow,
  TraceScoresRepository,
  type TraceScoreRow,
} from './scores.repository.js';

export type { NewTraceScore, ScoreWindow, TraceScoreRow } from './scores.repository.js';

/** One evaluator metric's scores in a window, as numbers. */
export interface ScoreWindowStats {
  /** Score records in the window (errors included). */
  n: number;
  /** Records with a score. */
  scored: number;
  passed: number;
  failed: number;
  errored: number;
  mean: number | null;
  sd: number | null;
}

const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;

/**
 * Scores of production traces, kept by the traces family beside the spans they score: written by
 * online evaluation once per evaluator version, target and metric, read back per trace, per
 * window (alerts), listed, aggregated by bucket and group, and with a version's enrichment.
 */
@Injectable()
export class TraceScoresService {
  constructor(
    private readonly scores: TraceScoresRepository,
    private readonly traceDatasets: TraceDatasets,
    private readonly registry: WorkspaceResourceRegistry,
  ) {}

  /** Keeps the scores no earlier write kept (inside the caller's unit of work); answers how many were new. */
  record(rows: NewTraceScore[]): Promise<number> {
    return this.scores.insert(rows);
  }

  async windowStats(window: ScoreWindow): Promise<ScoreWindowStats> {
    const c = await this.scores.windowCounts(window);
    const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
    return {
      n: Number(c.n),
      scored: Number(c.scored),
      passed: Number(c.passed),
      failed: Number(c.failed),
      errored: Number(c.errored),
      mean: num(c.mean),
      sd: num(c.sd),
    };
  }

  /** The window's lowest scores (failures first), at most `limit`. */
  lowest(window: ScoreWindow, limit: number): Promise<TraceScoreRow[]> {
    return this.scores.lowest(window, limit);
  }

  /** The judge cost (USD) an evaluator's scores recorded since `since`: what a daily budget counts. */
  costSince(evaluatorId: string, since: Date): Promise<number> {
    return this.scores.costSince(evaluatorId, since);
  }

  forTraces(workspaceId: string, datasetId: string, traceIds: string[]): Promise<TraceScoreRow[]> {
    return this.scores.forTraces(workspaceId, datasetId, traceIds);
  }

  /** Per trace, per evaluator name and metric: its newest score (traces without any are left out). */
  async ofTraces(
    workspaceId: string,
    datasetId: string,
    traceIds: string[],
  ): Promise<Map<string, Record<string, Record<string, TraceScoreOfTrace>>>> {
    return toTraceScoresOfTraces(await this.scores.newestForTraces(workspaceId, datasetId, traceIds));
  }

  /** GET /traces/scores: the workspace's score records that the query keeps, newest observed first. */
  async list(access: WorkspaceAccess, query: TraceScoresQuery): Promise<Page<TraceScoreResponse>> {
    if (query.dataset_id !== undefined) await this.requireDataset(access, query.dataset_id);
    if (query.evaluator_id !== undefined) await this.requireEvaluator(access, query.evaluator_id);
    const flag = (v: 'true' | 'false' | undefined) => (v === undefined ? undefined : v === 'true');
    const { rows, total } = await this.scores.page(
      access.workspaceId,
      {
        datasetId: query.dataset_id,
        traceId: query.trace_id,
        sessionId: query.session_id,
        evaluatorId: query.evaluator_id,
        evaluatorName: query.evaluator_name,
        metric: query.metric,
        passed: flag(query.passed),
        minScore: query.min_score,
        maxScore: query.max_score,
        hasError: flag(query.has_error),
        observedAfter: query.observed_after ? new Date(query.observed_after) : undefined,
        observedBefore: query.observed_before ? new Date(query.observed_before) : undefined,
      },
      pageWindow(query),
    );
    return pageOf(rows, total, query, toTraceScoreResponse);
  }

  /**
   * GET /traces/scores:aggregate: an evaluator's metric over [from, to) by hour, day or the whole
   * window, optionally by service, model or tag: counts, the pass rate with Wilson's interval, the
   * mean score with Student's t interval and the SD.
   */
  async aggregate(access: WorkspaceAccess, query: TraceScoresAggregateQuery): Promise<TraceScoreAggregateResponse> {
    const [from, to] = [new Date(query.from), new Date(query.to)];
    const bucket = query.bucket ?? 'none';
    if (to <= from) throw windowInvalid(`from (${query.from}) must be before to (${query.to})`, 'to');
    const size = bucket === 'none' ? null : BUCKET_MS[bucket];
    if (size !== null) {
      const buckets = Math.ceil((to.getTime() - Math.floor(from.getTime() / size) * size) / size);
      if (buckets > SCORE_LIMITS.buckets)
        throw windowInvalid(
          `${buckets} ${bucket} buckets between from and to; at most ${SCORE_LIMITS.buckets}: a coarser bucket or a shorter window`,
          'bucket',
        );
    }
    if (query.dataset_id !== undefined) await this.requireDataset(access, query.dataset_id);
    if (query.evaluator_id !== undefined) await this.requireEvaluator(access, query.evaluator_id);
    const rows = await this.scores.aggregate({
      workspaceId: access.workspaceId,
      evaluatorId: query.evaluator_id,
      metric: query.metric,
      from,
      to,
      bucket,
      groupBy: query.group_by,
      datasetId: query.dataset_id,
      version: query.evaluator_version,
      limit: SCORE_LIMITS.rows + 1,
    });
    if (rows.length > SCORE_LIMITS.rows)
      throw windowInvalid(
        `more than ${SCORE_LIMITS.rows} (bucket, group) rows: a coarser bucket, a shorter window or no group_by`,
        'group_by',
      );
    return {
      evaluator_id: query.evaluator_id,
      metric: query.metric,
      from,
      to,
      bucket,
      group_by: query.group_by ?? null,
      buckets: rows.map((row) => toScoreBucket(row, size === null ? to : new Date(row.bucket_start.getTime() + size))),
    };
  }

  /** A dataset filter names one of the workspace's datasets (404 otherwise); a test-case dataset simply holds no scores. */
  private requireDataset(access: WorkspaceAccess, datasetId: string): Promise<void> {
    return this.traceDatasets.requireAnyKind(access, datasetId);
  }

  /** An evaluator named by a filter must be the workspace's (online evaluation registers its records with the guard): 404 otherwise. */
  private async requireEvaluator(access: WorkspaceAccess, evaluatorId: string): Promise<void> {
    if ((await this.registry.resolve('online_evaluator', evaluatorId)) !== access.workspaceId)
      throw new NotFoundError('online evaluator', evaluatorId);
  }
}

function windowInvalid(detail: string, field: string): DomainError {
  return new DomainError(TraceErrors.trace_score_window_invalid, detail, { field });
}
