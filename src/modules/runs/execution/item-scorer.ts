import pLimit, { type LimitFunction } from 'p-limit';
import { invokeCustomOp } from '#libs/evaluation/custom-op-client.js';
import { scoreDeterministic } from '#libs/evaluation/deterministic-metrics.js';
import { grade } from '#libs/evaluation/judges/grade.js';
import { namesTrajectory } from '#libs/evaluation/judges/rubric.js';
import {
  DEFAULT_TRAJECTORY_TOKENS,
  renderTrajectory,
  type RenderedTrajectory,
} from '#libs/evaluation/trajectory/render.js';
import { NO_TRAJECTORY } from '#libs/evaluation/trajectory/trajectory-metrics.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import { valueAt } from '#libs/evaluation/row-context.js';
import { rowVerdict } from '#libs/evaluation/runs/row-verdict.js';
import type { MetricScore, PassRule } from '#libs/evaluation/runs/run.types.js';
import type { ColumnMapping } from '../../datasets/entities/dataset-version.entity.js';
import type { RunMetric } from './run-snapshot.js';
import type { RunItemRow } from '../runs.repository.js';

/** Secrets a run's scoring sends: judge keys by judge id, custom op keys by op name. */
export interface ScoringKeys {
  judges: Map<string, string | null>;
  customOps: Map<string, string | null>;
}

export interface ScoredItem {
  scores: Record<string, MetricScore>;
  passed: boolean | null;
  /** Judged metrics that returned no verdict, for the run's events. */
  judgeErrors: Array<{ metric: string; judge: string; code: string; message: string }>;
  /** Every judge call the item took, with the tokens the judge reported: what its cost is priced from. */
  judgeCalls: JudgeCall[];
}

export interface JudgeCall {
  metric: string;
  judge_id: string;
  model: string;
  ok: boolean;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

type ScorableItem = Pick<RunItemRow, 'row_id' | 'data' | 'output' | 'latency_ms' | 'usage' | 'cost_usd'> & {
  /** What the agent did; absent where no trajectory is read (the trajectory metrics then record an error). */
  trajectory?: Trajectory | null;
};

function usageOf(usage: ScorableItem['usage']): { prompt_tokens?: number; completion_tokens?: number } | null {
  return usage
    ? { prompt_tokens: usage.prompt_tokens ?? undefined, completion_tokens: usage.completion_tokens ?? undefined }
    : null;
}

/** A mapped value as text for metrics and rubrics (objects as JSON). */
function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The trajectory as a rubric naming {{trajectory}} shows it to the judge; null when the rubric does not name it. */
function rubricTrajectory(
  rubric: string,
  trajectory: Trajectory | null,
  output: string | null,
): RenderedTrajectory | { error: string } | null {
  if (!namesTrajectory(rubric)) return null;
  if (!trajectory) return { error: NO_TRAJECTORY };
  return renderTrajectory(trajectory, { max_tokens: DEFAULT_TRAJECTORY_TOKENS, final_answer: output });
}

/** What the judge was shown of the trajectory, kept with its verdict. */
function trajectoryBudget(shown: RenderedTrajectory): Record<string, unknown> {
  return {
    trajectory_tokens: shown.tokens,
    max_tokens: shown.max_tokens,
    steps_shown: shown.steps_shown,
    steps_total: shown.steps_total,
  };
}

/**
 * Scores one item with every metric of a run: deterministic metrics in process, judged ones
 * through their judge (each judge with its own concurrency), custom ones through their op.
 * A metric that cannot score records an error, never a made-up number.
 */
export class ItemScorer {
  private readonly judgeSlots = new Map<string, LimitFunction>();

  constructor(
    private readonly metrics: RunMetric[],
    private readonly rule: PassRule,
    private readonly mapping: ColumnMapping,
    private readonly keys: ScoringKeys,
    private readonly signal?: AbortSignal,
  ) {
    for (const m of metrics)
      if (m.judge && !this.judgeSlots.has(m.judge.id)) this.judgeSlots.set(m.judge.id, pLimit(m.judge.max_concurrency));
  }

  async score(item: ScorableItem): Promise<ScoredItem> {
    const fields = {
      input: text(this.mapped(item, 'input')),
      expected_output: text(this.mapped(item, 'expected_output')),
      context: text(this.mapped(item, 'context')),
    };
    const judgeErrors: ScoredItem['judgeErrors'] = [];
    const judgeCalls: JudgeCall[] = [];
    const entries = await Promise.all(
      this.metrics.map(async (metric): Promise<[string, MetricScore]> => {
        if (metric.kind === 'deterministic') {
          const params = metric.threshold === null ? metric.params : { ...metric.params, threshold: metric.threshold };
          const result = scoreDeterministic(
            metric.metric,
            {
              output: item.output,
              ...fields,
              latency_ms: item.latency_ms,
              usage: usageOf(item.usage),
              cost_usd: item.cost_usd,
              trajectory: item.trajectory ?? null,
              data: item.data,
            },
            params,
          );
          return [
            metric.name,
            {
              score: result.score,
              passed: result.passed ?? null,
              normalized: metric.better === 'higher' ? result.score : null,
              detail: result.detail,
              error: result.error ?? null,
            },
          ];
        }
        if (item.output === null)
          return [
            metric.name,
            {
              score: null,
              passed: null,
              error: 'no output to score (the SUT gave none, or the mapped span field is empty)',
            },
          ];
        if (metric.kind === 'judged')
          return [metric.name, await this.judged(metric, item, fields, judgeErrors, judgeCalls)];
        return [metric.name, await this.custom(metric, item, fields)];
      }),
    );
    const scores = Object.fromEntries(entries);
    return { scores, passed: rowVerdict(scores, this.metrics, this.rule), judgeErrors, judgeCalls };
  }

  private mapped(item: ScorableItem, field: 'input' | 'expected_output' | 'context'): unknown {
    return valueAt(item.data, this.mapping[field] ?? field);
  }

  private async judged(
    metric: RunMetric,
    item: ScorableItem,
    fields: { input: string | null; expected_output: string | null; context: string | null },
    errors: ScoredItem['judgeErrors'],
    calls: JudgeCall[],
  ): Promise<MetricScore> {
    const judge = metric.judge!;
    const spec = metric.judged!;
    const shown = rubricTrajectory(spec.rubric, item.trajectory ?? null, item.output);
    if (shown && 'error' in shown) return { score: null, passed: null, error: shown.error };
    const result = await this.judgeSlots.get(judge.id)!(() =>
      grade(
        judge.connection,
        this.keys.judges.get(judge.id) ?? null,
        spec.rubric,
        spec.scale,
        { ...fields, output: item.output, row: item.data, trajectory: shown?.text },
        { signal: this.signal },
      ),
    );
    calls.push({
      metric: metric.name,
      judge_id: judge.id,
      model: judge.connection.model,
      ok: result.call.ok,
      prompt_tokens: result.call.usage.prompt_tokens,
      completion_tokens: result.call.usage.completion_tokens,
    });
    if (!result.verdict) {
      const error = result.error ?? { code: 'no_verdict', message: 'the judge gave no verdict' };
      errors.push({ metric: metric.name, judge: judge.name, ...error });
      return { score: null, passed: null, error: `${error.code}: ${error.message}` };
    }
    const v = result.verdict;
    const passed =
      spec.scale.type === 'numeric'
        ? v.normalized >= (spec.pass_threshold ?? 0.75)
        : (spec.pass_labels ?? []).includes(v.label ?? '');
    const detail = shown ? trajectoryBudget(shown) : undefined;
    return { score: v.score, passed, normalized: v.normalized, label: v.label, reason: v.reason, detail, error: null };
  }

  private async custom(
    metric: RunMetric,
    item: ScorableItem,
    fields: { input: string | null; expected_output: string | null; context: string | null },
  ): Promise<MetricScore> {
    const op = metric.custom_op!;
    const [result] = await invokeCustomOp(
      {
        endpoint_url: op.endpoint_url,
        health_url: '',
        timeout_ms: op.timeout_ms,
        secret: this.keys.customOps.get(op.name) ?? null,
      },
      op.name,
      metric.params,
      [{ row_id: item.row_id, output: item.output, ...fields }],
      this.signal,
    );
    if (result.error || result.score === null) return { score: null, passed: null, error: result.error ?? 'no score' };
    const passed =
      result.passed ??
      (metric.threshold === null
        ? null
        : metric.better === 'higher'
          ? result.score >= metric.threshold
          : result.score <= metric.threshold);
    return { score: result.score, passed, detail: result.detail ?? undefined, error: null };
  }
}
