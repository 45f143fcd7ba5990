/**
 * What a run records per row and what it concludes. Snake-case members: stored as JSON and
 * served as is. Pure types: the runs module, summaries and diffs share them.
 */

/** One metric's verdict on one row. */
export interface MetricScore {
  /** null when the metric could not be computed (see error): never a made-up number. */
  score: number | null;
  /** Against the row threshold (or the judged pass rule); null when there is none or no score. */
  passed: boolean | null;
  /** Score normalised to [0, 1] where the metric has a scale (judged metrics); else equal to score for [0,1] metrics, null otherwise. */
  normalized?: number | null;
  label?: string | null;
  reason?: string | null;
  detail?: Record<string, unknown>;
  error?: string | null;
}

/** A row's result in a run (one repetition). */
export interface ItemResult {
  row_id: string;
  repetition: number;
  /** `done` (the SUT answered and the output was extracted) or `error` (the call failed; `error` says why). */
  status: 'done' | 'error';
  output: string | null;
  latency_ms: number | null;
  cost_usd: number | null;
  error: { code: string; message: string } | null;
  /** Metric name -> score. */
  scores: Record<string, MetricScore>;
  /** The row verdict under the pass rule; null when no gating metric gave a verdict. */
  passed: boolean | null;
  /** The row's dimension values, for breakdowns (dimension -> value). */
  dimensions?: Record<string, string | null>;
}

/** How a metric of the run is judged. */
export interface RunMetricSpec {
  name: string;
  /** `higher`: larger scores are better (similarities, judged); `lower`: latency, cost, length. */
  better: 'higher' | 'lower';
  /** Counts toward the row verdict. */
  gating: boolean;
  /** The run fails when fewer rows than this share pass this metric. */
  min_pass_rate: number | null;
}

export interface PassRule {
  row: 'all' | 'any';
  min_pass_rate: number;
  /** Rows whose call failed count as failed (true) or are left out of the rate (false). */
  errors_fail: boolean;
}

export interface Histogram {
  /** Bin edges: bins[i] covers [edges[i], edges[i+1]) and the last bin includes its upper edge. */
  edges: number[];
  counts: number[];
}

export interface MetricSummary {
  name: string;
  /** Rows with a score. */
  scored: number;
  /** Rows where the metric could not be computed. */
  errors: number;
  /** `normalized` when every score has a 0..1 normalisation (judged rubrics, 0..1 metrics): the statistics below are on 0..1; `raw` otherwise (latency, counts). */
  scale: 'normalized' | 'raw';
  /** Mean of the raw scores (a rubric's own 1..5, say); equal to `mean` on the raw scale. */
  raw_mean: number | null;
  mean: number | null;
  median: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
  std: number | null;
  /** Share of rows with a verdict that passed; null when no row has one. */
  pass_rate: number | null;
  passed: number;
  failed: number;
  /** 10 equal-width bins between min and max (one bin when they are equal); empty when nothing was scored. */
  histogram: Histogram;
  /** Whether the metric met its min_pass_rate (null when it has none). */
  meets_min_pass_rate: boolean | null;
}

export interface DimensionBreakdown {
  dimension: string;
  values: Array<{
    value: string | null;
    rows: number;
    pass_rate: number | null;
    metrics: Record<string, { mean: number | null; pass_rate: number | null }>;
  }>;
}

export interface RunSummary {
  rows: number;
  /** Rows whose SUT call succeeded / failed. */
  completed: number;
  errored: number;
  passed_rows: number;
  failed_rows: number;
  /** Share of counted rows that passed (errors count per the pass rule). */
  pass_rate: number | null;
  /** The run verdict under the pass rule. */
  passed: boolean | null;
  /** Why the run failed its pass rule, in words (empty when it passed). */
  reasons: string[];
  latency_ms: { mean: number | null; p50: number | null; p90: number | null; p99: number | null };
  cost_usd_total: number;
  metrics: MetricSummary[];
  by_dimension: DimensionBreakdown[];
  /** Repeated trials: pass@k, pass^k, flaky rows, spread across repetitions. */
  trials: TrialsSummary;
}

export type DiffStatus = 'regressed' | 'improved' | 'unchanged' | 'changed' | 'new' | 'missing';

export interface MetricDelta {
  base: number | null;
  candidate: number | null;
  /** candidate - base when both exist. */
  delta: number | null;
  base_passed: boolean | null;
  candidate_passed: boolean | null;
}

export interface DiffRow {
  row_id: string;
  status: DiffStatus;
  base_passed: boolean | null;
  candidate_passed: boolean | null;
  metrics: Record<string, MetricDelta>;
  output_changed: boolean;
}

export interface DiffSummary {
  rows: number;
  regressed: number;
  improved: number;
  unchanged: number;
  changed: number;
  new: number;
  missing: number;
  metrics: Array<{
    name: string;
    base_mean: number | null;
    candidate_mean: number | null;
    delta: number | null;
    base_pass_rate: number | null;
    candidate_pass_rate: number | null;
    regressions: number;
    improvements: number;
  }>;
}

/** A paired comparison of one metric (or the row verdict) between two runs over their matched rows. */
export interface PairedComparison {
  /** The metric, or `row_verdict` for the rows' pass/fail under each run's pass rule. */
  name: string;
  /** `verdict`: pass/fail per row (binary metrics, the row verdict); `score`: the score on the metric's reported scale. */
  measure: 'score' | 'verdict';
  /** Matched rows with a value in both runs. */
  n: number;
  /** `too_few_rows`: fewer pairs than the minimum; no interval, test or verdict. */
  status: 'tested' | 'too_few_rows';
  base_mean: number | null;
  candidate_mean: number | null;
  /** Mean of candidate - base over the pairs (a difference in pass rates for verdicts). */
  mean_delta: number | null;
  ci_low: number | null;
  ci_high: number | null;
  test: 'wilcoxon_signed_rank' | 'mcnemar_exact';
  method: 'exact' | 'normal_approximation' | null;
  statistic: number | null;
  p_value: number | null;
  /** Holm-adjusted within its family. */
  p_adjusted: number | null;
  effect_size: { name: 'rank_biserial' | 'risk_difference'; value: number } | null;
  /** Which way the candidate moved, by the metric's better direction; `none` when no pair moved on balance. */
  direction: 'better' | 'worse' | 'none' | null;
  /** p_adjusted <= alpha; null when not tested. */
  significant: boolean | null;
}

export interface DimensionComparison {
  value: string | null;
  /** Matched rows with this value. */
  rows: number;
  row_verdict: PairedComparison;
  metrics: PairedComparison[];
}

export interface DiffStatistics {
  alpha: number;
  confidence: number;
  correction: 'holm';
  min_rows: number;
  /** Rows present in both runs. */
  matched_rows: number;
  row_verdict: PairedComparison;
  metrics: PairedComparison[];
  by_dimension: Array<{ dimension: string; values: DimensionComparison[] }>;
}

/** How a run's rows behave across repetitions (docs/runs.md "Repeated trials"). */
export interface TrialsSummary {
  /** The most tries any row had. */
  repetitions: number;
  /** Rows with at least one verdict. */
  rows: number;
  /** Rows with two verdicts or more: the ones that can be flaky. */
  repeated_rows: number;
  /** Per k = 1..repetitions, over the rows with at least k verdicts: mean unbiased pass@k and pass^k. */
  by_k: Array<{ k: number; rows: number; pass_at_k: number | null; pass_hat_k: number | null }>;
  /** Repeated rows whose tries both passed and failed. */
  flaky_rows: number;
  flaky_share: number | null;
  /** `single_trial` (no row repeated), `stable` (no flaky row), `mostly_stable` (at most 5% flaky), `unstable`. */
  stability: 'single_trial' | 'stable' | 'mostly_stable' | 'unstable';
  metrics: Array<{
    name: string;
    /** Rows with two scores or more. */
    rows: number;
    /** Mean over those rows of the sample variance of their scores (on the reported scale). */
    within_row_variance: number | null;
    /** Mean score of each repetition (0, 1, …) over the rows it scored. */
    repetition_means: number[];
    /** Sample standard deviation of repetition_means: how far the run's mean moves between tries. */
    between_repetition_std: number | null;
    /** Rows whose tries both passed and failed this metric. */
    flaky_rows: number;
  }>;
  /** The first 100 flaky rows: per row pass@k and pass^k for k = 1..trials (a stable row's are all its one verdict). */
  flaky_examples: Array<{ row_id: string; trials: number; passed: number; pass_at_k: number[]; pass_hat_k: number[] }>;
}
