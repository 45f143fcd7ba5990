import { Injectable } from '@nestjs/common';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { JudgeValidationResponse } from '../../catalogues/dto/judge-validation.dto.js';
import type { JudgeValidationSource } from '../../catalogues/entities/judge-validation.entity.js';
import type { JudgedSpec } from '../../catalogues/entities/metric-config.entity.js';
import {
  JudgeValidationsService,
  type LatestValidation,
} from '../../catalogues/judge-validations/judge-validations.service.js';
import {
  correctedFigure,
  MAX_VALIDATION_PAIRS,
  MIN_VALIDATION_PAIRS,
  type CorrectedPassRate,
  type JudgePair,
} from '#libs/evaluation/judge-validation.js';
import type { DiffSummary, MetricSummary, RunSummary } from '#libs/evaluation/runs/run.types.js';
import type { DiffResult } from '#libs/evaluation/runs/diff.js';
import type { CreateJudgeValidationRequest, LabelValue } from '../dto/judge-validation.dto.js';
import type { RunEntity } from '../entities/run.entity.js';
import type { RunMetric } from '../execution/run-snapshot.js';
import { RunReadService, type RunItemRow } from '../run-read.service.js';
import { RunErrors } from '../runs.errors.js';

/** A human label of a run row, with each reviewer's label when several reviewed it. */
export interface HumanLabel {
  row_id: string;
  value: LabelValue | null;
  reviews?: Array<LabelValue | null>;
}

/** The human label of a run's item, and the labels handed in by row (null when read from the rows themselves). */
interface ItemLabels {
  of(item: RunItemRow): HumanLabel | undefined;
  handedIn: ReadonlyMap<string, HumanLabel> | null;
}

export interface ValidationOptions {
  /** Values meaning pass (compared as text, case-insensitively). */
  positive?: readonly LabelValue[];
  /** A dimension to break the figures down by. */
  dimension?: string | null;
  confidence?: number;
  seed?: number;
  /** Where the labels came from (default: handed in); a review queue names itself and its rubric version. */
  source?:
    | { kind: 'field' | 'labels'; field: string | null }
    | { kind: 'review_queue'; field: string; queue_id: string; rubric_version: number };
}

const PASS_WORDS = new Set(['true', 'pass', 'passed', 'yes', '1']);
const FAIL_WORDS = new Set(['false', 'fail', 'failed', 'no', '0']);

/**
 * A human label as a verdict: among `positive` (as text) when given; otherwise true/false and the
 * usual words, a label of the judge's label scale by its pass labels, and a number on the judge's
 * numeric scale by the judge's own pass threshold. Null when it says neither.
 */
export function humanVerdict(
  value: LabelValue | null | undefined,
  positive: ReadonlySet<string> | null,
  judged: JudgedSpec | null,
): boolean | null {
  if (value === null || value === undefined || value === '') return null;
  const text = String(value).trim().toLowerCase();
  if (positive) return positive.has(text);
  if (typeof value === 'boolean') return value;
  const scale = judged?.scale;
  if (typeof value === 'number' && scale?.type === 'numeric' && scale.max > scale.min)
    return (value - scale.min) / (scale.max - scale.min) >= (judged?.pass_threshold ?? 0.5);
  if (scale?.type === 'labels') {
    const label = scale.labels.find((l) => l.toLowerCase() === text);
    if (label !== undefined) return (judged?.pass_labels ?? []).some((l) => l.toLowerCase() === text);
  }
  return PASS_WORDS.has(text) ? true : FAIL_WORDS.has(text) ? false : null;
}

/**
 * Judge validity where the verdicts are: a run's judged metric checked against human labels of
 * its rows (a column of the rows, or labels handed in, e.g. by a review queue), recorded with the
 * metric's config version through the catalogues; and the pass rates of a run corrected for its
 * judges' validated errors.
 */
@Injectable()
export class JudgeValidityService {
  constructor(
    private readonly reads: RunReadService,
    private readonly validations: JudgeValidationsService,
  ) {}

  /** POST /runs/{run_id}/judge-validations: labels from a column of the rows, or handed in. */
  async validate(
    access: WorkspaceAccess,
    runId: string,
    body: CreateJudgeValidationRequest,
    caller: Principal,
  ): Promise<JudgeValidationResponse> {
    const { field, labels, reviewer_fields: reviewers } = body.human;
    if ((field === undefined) === (labels === undefined) || (reviewers !== undefined && field === undefined))
      throw new DomainError(
        RunErrors.validation_labels_invalid,
        'Name the human labels by human.field (a column of the rows) or by human.labels, exactly one; reviewer_fields goes with field',
      );
    const options: ValidationOptions = {
      positive: body.human.positive,
      dimension: body.by_dimension ?? null,
      confidence: body.confidence,
      seed: body.seed,
    };
    if (labels) return this.validateFromLabels(access, runId, body.metric, labels, options, caller);
    const run = await this.requireRun(access, runId);
    const columns = [field!, ...(reviewers ?? [])];
    // The labels are read from each item as the pairing reads the run: one pass over its items.
    const fromRow = (item: RunItemRow): HumanLabel => {
      const values = columns.map((c) => labelValue(item.data?.[c]));
      return { row_id: item.row_id, value: values[0], ...(reviewers ? { reviews: values } : {}) };
    };
    return this.record(
      access,
      run,
      body.metric,
      { of: fromRow, handedIn: null },
      { ...options, source: { kind: 'field', field: field! } },
      caller,
    );
  }

  /**
   * Validates the run's judged metric against final human labels handed in as values (a review
   * queue's, say): pairs each label with the judge's verdict on that row (its first repetition),
   * computes the figures and keeps them with the metric's config version.
   */
  async validateFromLabels(
    access: WorkspaceAccess,
    runId: string,
    metric: string,
    labels: readonly HumanLabel[],
    options: ValidationOptions,
    caller: Principal,
  ): Promise<JudgeValidationResponse> {
    const run = await this.requireRun(access, runId);
    const byRow = new Map<string, HumanLabel>();
    for (const l of labels) if (!byRow.has(l.row_id)) byRow.set(l.row_id, l);
    return this.record(access, run, metric, { of: (item) => byRow.get(item.row_id), handedIn: byRow }, options, caller);
  }

  /**
   * Each judged metric's pass rate corrected for its judge's newest validation (of the config
   * version the run used), by metric name; metrics without one are left out.
   */
  async corrections(
    run: RunEntity,
    summary: Pick<RunSummary, 'metrics'> | null,
  ): Promise<Map<string, CorrectedPassRate>> {
    const judged = run.snapshot.metrics.filter((m) => m.kind === 'judged' && m.config);
    const out = new Map<string, CorrectedPassRate>();
    if (!summary || judged.length === 0) return out;
    const latest = await this.latest(run.workspaceId, judged);
    for (const m of judged) {
      const validation = latest.get(m.config!.id);
      const s = summary.metrics.find((x) => x.name === m.name);
      if (!validation || !s) continue;
      out.set(m.name, correctedOf(s, validation));
    }
    return out;
  }

  /** The newest validation of each judged metric's config version, by config version id. */
  latest(workspaceId: string, metrics: readonly RunMetric[]): Promise<Map<string, LatestValidation>> {
    return this.validations.latest(
      workspaceId,
      metrics.flatMap((m) => (m.kind === 'judged' && m.config ? [m.config.id] : [])),
    );
  }

  /** The summary with each judged metric's `corrected` pass rate (null without a validation). */
  async withCorrected<S extends Pick<RunSummary, 'metrics'>>(run: RunEntity, summary: S | null): Promise<S | null> {
    if (!summary) return summary;
    const corrected = await this.corrections(run, summary);
    const judged = new Set(run.snapshot.metrics.filter((m) => m.kind === 'judged').map((m) => m.name));
    return {
      ...summary,
      metrics: summary.metrics.map((m) =>
        judged.has(m.name) ? { ...m, corrected: corrected.get(m.name) ?? null } : m,
      ),
    };
  }

  /**
   * A diff's summary with, for each metric judged in either run, each side's pass rate over the
   * diff's rows corrected by the newest validation of the config version that side used.
   */
  async diffSummary(base: RunEntity, candidate: RunEntity, diff: DiffResult): Promise<DiffSummary> {
    const side = async (run: RunEntity, which: 'base_passed' | 'candidate_passed') => {
      const judged = run.snapshot.metrics.filter((m) => m.kind === 'judged');
      const latest = await this.latest(run.workspaceId, judged);
      return new Map(
        judged.map((m) => {
          const v = m.config ? latest.get(m.config.id) : undefined;
          if (!v) return [m.name, null] as const;
          let passed = 0;
          let failed = 0;
          for (const row of diff.rows) {
            const verdict = row.metrics[m.name]?.[which];
            if (verdict === true) passed++;
            else if (verdict === false) failed++;
          }
          return [m.name, correctedOf({ passed, failed }, v)] as const;
        }),
      );
    };
    const [b, c] = [await side(base, 'base_passed'), await side(candidate, 'candidate_passed')];
    return {
      ...diff.summary,
      metrics: diff.summary.metrics.map((m) =>
        b.has(m.name) || c.has(m.name)
          ? { ...m, base_corrected: b.get(m.name) ?? null, candidate_corrected: c.get(m.name) ?? null }
          : m,
      ),
    };
  }

  private async requireRun(access: WorkspaceAccess, runId: string): Promise<RunEntity> {
    const run = await this.reads.find(access.workspaceId, runId);
    if (!run) throw new NotFoundError('run', runId);
    return run;
  }

  private async record(
    access: WorkspaceAccess,
    run: RunEntity,
    metricName: string,
    labels: ItemLabels,
    options: ValidationOptions,
    caller: Principal,
  ): Promise<JudgeValidationResponse> {
    const metric = run.snapshot.metrics.find((m) => m.name === metricName);
    if (!metric || metric.kind !== 'judged' || !metric.config)
      throw new DomainError(
        RunErrors.validation_metric_invalid,
        !metric
          ? `Run ${run.id} has no metric ${metricName} (it has ${run.snapshot.metrics.map((m) => m.name).join(', ')})`
          : metric.kind !== 'judged'
            ? `${metricName} is a ${metric.kind} metric; only judged metrics are validated against human labels`
            : `${metricName} ran with its built-in defaults, not a metric config version to keep the validation with; create a metric config and run with it`,
        { metric: metricName },
      );
    const positive = options.positive ? new Set(options.positive.map((v) => String(v).trim().toLowerCase())) : null;
    const pairs: JudgePair[] = [];
    const seen = new Set<string>();
    let unlabelled = 0;
    for await (const page of this.reads.itemPages(run.id))
      for (const item of page) {
        // A row repeated in the run counts with its first repetition (items come in repetition order).
        if (seen.has(item.row_id)) continue;
        seen.add(item.row_id);
        const label = labels.of(item);
        const human = humanVerdict(label?.value, positive, metric.judged);
        if (human === null) {
          if (item.scores?.[metric.name]?.passed != null) unlabelled++;
          continue;
        }
        pairs.push(
          pairOf(item, metric.name, label!, human, { judged: metric.judged, positive, dimension: options.dimension }),
        );
      }
    const unmatched = labels.handedIn ? [...labels.handedIn.keys()].filter((id) => !seen.has(id)).length : 0;
    const both = pairs.filter((p) => p.judge_passed !== null).length;
    if (both === 0)
      throw new DomainError(
        RunErrors.validation_no_overlap,
        `No row of run ${run.id} has both a ${metric.name} verdict and a human label (${unmatched} labels name rows the run does not have)`,
        { unmatched_labels: unmatched },
      );
    if (both < MIN_VALIDATION_PAIRS)
      throw new DomainError(
        RunErrors.validation_too_few_pairs,
        `${both} rows have both a ${metric.name} verdict and a human label; a validation needs at least ${MIN_VALIDATION_PAIRS}`,
        { pairs: both, minimum: MIN_VALIDATION_PAIRS },
      );
    if (pairs.length > MAX_VALIDATION_PAIRS)
      throw new DomainError(
        RunErrors.validation_too_many_pairs,
        `${pairs.length} rows are labelled; a validation keeps at most ${MAX_VALIDATION_PAIRS}`,
        { pairs: pairs.length, maximum: MAX_VALIDATION_PAIRS },
      );
    const source: JudgeValidationSource = {
      run_id: run.id,
      kind: options.source?.kind ?? 'labels',
      field: options.source?.field ?? null,
      repetition: 'first',
      unlabelled_rows: unlabelled,
      unmatched_labels: unmatched,
      ...(options.source?.kind === 'review_queue'
        ? { queue_id: options.source.queue_id, rubric_version: options.source.rubric_version }
        : {}),
    };
    return this.validations.record(
      access,
      {
        metricConfigId: metric.config.id,
        metric: metric.name,
        source,
        pairs,
        level: options.confidence ?? 0.95,
        seed: options.seed ?? 1,
        dimension: options.dimension ?? null,
      },
      caller,
    );
  }
}

/** A row's value as a label: text, a finite number or a boolean; anything else is none. */
function labelValue(v: unknown): string | number | boolean | null {
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function pairOf(
  item: RunItemRow,
  metric: string,
  label: HumanLabel,
  human: boolean,
  how: { judged: JudgedSpec | null; positive: ReadonlySet<string> | null; dimension?: string | null },
): JudgePair {
  const { judged, positive, dimension } = how;
  // The row's dimensions; a dimension asked for and not assigned is read from the row's column of that name.
  const dimensions: Record<string, string | null> = { ...(item.dimensions ?? {}) };
  const column = dimension ? item.data?.[dimension] : undefined;
  if (dimension && !(dimension in dimensions) && (typeof column === 'string' || typeof column === 'number'))
    dimensions[dimension] = String(column);
  const score = item.scores?.[metric];
  const numeric = judged?.scale.type === 'numeric' && typeof label.value === 'number';
  return {
    item: item.row_id,
    judge_passed: score?.passed ?? null,
    judge_score: score?.score ?? null,
    judge_label: score?.label ?? null,
    human_passed: human,
    human_score: numeric ? (label.value as number) : null,
    dimensions,
    ...(label.reviews ? { reviews: label.reviews.map((r) => humanVerdict(r, positive, judged)) } : {}),
  };
}

/** A metric summary's pass rate corrected by a validation. */
export function correctedOf(s: Pick<MetricSummary, 'passed' | 'failed'>, v: LatestValidation): CorrectedPassRate {
  return correctedFigure(s.passed, s.passed + s.failed, { id: v.id, confusion: v.result.confusion }, v.result.level);
}
