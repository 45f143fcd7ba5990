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
  values: Array<{ value: string | null; rows: number; pass_rate: number | null; metrics: Record<string, { mean: number | null; pass_rate: number | null }> }>;
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
  metrics: Array<{ name: string; base_mean: number | null; candidate_mean: number | null; delta: number | null; base_pass_rate: number | null; candidate_pass_rate: number | null; regressions: number; improvements: number }>;
}
