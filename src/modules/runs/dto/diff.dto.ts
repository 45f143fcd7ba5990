import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsUUID, Max, Min } from 'class-validator';
import { EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { CorrectedPassRateResponse } from './judge-validation.dto.js';

/** How the example's judged metric moved on a regressed row. */
const EXAMPLE_DELTA = { base: 0.75, candidate: 0.5, delta: -0.25, base_passed: true, candidate_passed: false };

export const DIFF_STATUSES = ['regressed', 'improved', 'unchanged', 'changed', 'new', 'missing'] as const;

/** How two runs are compared statistically (the diff's `statistics`, the gate's regressions). */
export class StatisticsQuery {
  /** Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05) */
  @ApiPropertyOptional({ example: 0.05 })
  @IsOptional()
  @Type(() => Number)
  @IsNumber()
  @Min(0.0001)
  @Max(0.5)
  alpha?: number;

  /** Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10) */
  @ApiPropertyOptional({ example: 10 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(2)
  @Max(10_000)
  min_rows?: number;
}

export class DiffQuery extends StatisticsQuery {
  /** The run compared against (e.g. the last release) */
  @IsUUID()
  base: string;

  /** The run under review */
  @IsUUID()
  candidate: string;

  /** Only rows of this status */
  @ApiPropertyOptional({ enum: DIFF_STATUSES })
  @IsOptional()
  @IsIn(DIFF_STATUSES)
  status?: (typeof DIFF_STATUSES)[number];

  /** A score move smaller than this is no move (default 1e-9) */
  @IsOptional()
  @Type(() => Number)
  @IsNumber()
  @Min(0)
  @Max(1_000_000)
  tolerance?: number;

  /** Rows per page, 1..1000 (default 100) */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset?: number;
}

export class DiffExportQuery extends DiffQuery {
  /** csv (one line per row, a base/candidate/delta column triple per metric) or json (summary and every row); default csv */
  @ApiPropertyOptional({ enum: ['csv', 'json'] })
  @IsOptional()
  @IsIn(['csv', 'json'])
  format?: 'csv' | 'json';
}

export class DiffRowQuery {
  @IsUUID()
  base: string;

  @IsUUID()
  candidate: string;

  /** The dataset row */
  @IsUUID()
  row_id: string;
}

export class MetricDeltaDto {
  @ApiProperty({ type: 'number', nullable: true, example: 0.75 })
  base: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.5 })
  candidate: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: -0.25 })
  delta: number | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  base_passed: boolean | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  candidate_passed: boolean | null;
}

export class DiffRowDto {
  @ApiProperty({ example: EXAMPLE_ID.rows[1] })
  row_id: string;
  @ApiProperty({ enum: DIFF_STATUSES, example: 'regressed' })
  status: string;
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  base_passed: boolean | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  candidate_passed: boolean | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' },
    example: { [EXAMPLE_NAME.metricConfig]: EXAMPLE_DELTA },
  })
  metrics: Record<string, MetricDeltaDto>;
  @ApiProperty({ example: true })
  output_changed: boolean;
}

export class DiffMetricSummaryDto {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  @ApiProperty({ type: 'number', nullable: true, example: 0.84 })
  base_mean: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.86 })
  candidate_mean: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.02 })
  delta: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.91 })
  base_pass_rate: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.93 })
  candidate_pass_rate: number | null;
  @ApiProperty({ example: 4 })
  regressions: number;
  @ApiProperty({ example: 9 })
  improvements: number;
  /** Judged metrics: the base run's pass rate over the diff's rows corrected for its judge (null without a validation of its config version) */
  @ApiPropertyOptional({ type: () => CorrectedPassRateResponse, nullable: true })
  base_corrected?: CorrectedPassRateResponse | null;
  /** Judged metrics: the candidate's, corrected for its own judge's validation */
  @ApiPropertyOptional({ type: () => CorrectedPassRateResponse, nullable: true })
  candidate_corrected?: CorrectedPassRateResponse | null;
}

export class DiffSummaryDto {
  @ApiProperty({ example: 214 })
  rows: number;
  @ApiProperty({ example: 4 })
  regressed: number;
  @ApiProperty({ example: 9 })
  improved: number;
  @ApiProperty({ example: 196 })
  unchanged: number;
  @ApiProperty({ example: 5 })
  changed: number;
  @ApiProperty({ example: 0 })
  new: number;
  @ApiProperty({ example: 0 })
  missing: number;
  @ApiProperty({ type: () => [DiffMetricSummaryDto] })
  metrics: DiffMetricSummaryDto[];
}

const EXAMPLE_COMPARISON = {
  name: EXAMPLE_NAME.metricConfig,
  measure: 'score',
  n: 214,
  status: 'tested',
  base_mean: 0.84,
  candidate_mean: 0.86,
  mean_delta: 0.02,
  ci_low: -0.004,
  ci_high: 0.043,
  test: 'wilcoxon_signed_rank',
  method: 'normal_approximation',
  statistic: 1840,
  p_value: 0.11,
  p_adjusted: 0.33,
  effect_size: { name: 'rank_biserial', value: 0.21 },
  direction: 'better',
  significant: false,
};
const EXAMPLE_ROW_VERDICT = {
  ...EXAMPLE_COMPARISON,
  name: 'row_verdict',
  measure: 'verdict',
  base_mean: 0.91,
  candidate_mean: 0.93,
  mean_delta: 0.023,
  ci_low: -0.009,
  ci_high: 0.056,
  test: 'mcnemar_exact',
  method: 'exact',
  statistic: 4,
  p_value: 0.27,
  p_adjusted: 0.54,
  effect_size: { name: 'risk_difference', value: 0.023 },
};

/** One metric (or the row verdict) compared over the matched rows: see docs/runs.md "Statistics" */
export class PairedComparisonDto {
  /** The metric, or `row_verdict` */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  /** `verdict`: pass/fail per row (metrics that score only 0 or 1, and the row verdict); `score`: the score on the metric's reported scale */
  @ApiProperty({ enum: ['score', 'verdict'], example: 'score' })
  measure: string;
  /** Matched rows with a value in both runs */
  @ApiProperty({ example: 214 })
  n: number;
  /** `too_few_rows`: fewer pairs than `min_rows`, so no interval, test or verdict */
  @ApiProperty({ enum: ['tested', 'too_few_rows'], example: 'tested' })
  status: string;
  @ApiProperty({ type: 'number', nullable: true, example: 0.84 })
  base_mean: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.86 })
  candidate_mean: number | null;
  /** Mean of candidate - base over the pairs (of 0/1 verdicts: the change in pass rate) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.02 })
  mean_delta: number | null;
  /** 95% paired-bootstrap percentile interval of mean_delta (2,000 resamples, seeded by the run ids) */
  @ApiProperty({ type: 'number', nullable: true, example: -0.004 })
  ci_low: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.043 })
  ci_high: number | null;
  @ApiProperty({ enum: ['wilcoxon_signed_rank', 'mcnemar_exact'], example: 'wilcoxon_signed_rank' })
  test: string;
  @ApiProperty({ enum: ['exact', 'normal_approximation'], nullable: true, example: 'normal_approximation' })
  method: string | null;
  /** Wilcoxon: the smaller signed-rank sum; McNemar: the smaller discordant count */
  @ApiProperty({ type: 'number', nullable: true, example: 1840 })
  statistic: number | null;
  /** Two-sided, unadjusted */
  @ApiProperty({ type: 'number', nullable: true, example: 0.11 })
  p_value: number | null;
  /** Holm-adjusted within its family (the overall comparisons, or every by-dimension one) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.33 })
  p_adjusted: number | null;
  /** `rank_biserial` (matched pairs, -1..1) for scores, `risk_difference` (change in pass rate) for verdicts */
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { name: { type: 'string', enum: ['rank_biserial', 'risk_difference'] }, value: { type: 'number' } },
    example: { name: 'rank_biserial', value: 0.21 },
  })
  effect_size: { name: string; value: number } | null;
  /** Which way the candidate moved by the metric's better direction (`none`: balanced); null when not tested */
  @ApiProperty({ enum: ['better', 'worse', 'none'], nullable: true, example: 'better' })
  direction: string | null;
  /** p_adjusted <= alpha; null when not tested */
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  significant: boolean | null;
}

export class DimensionValueComparisonDto {
  @ApiProperty({ type: 'string', nullable: true, example: 'billing' })
  value: string | null;
  /** Matched rows with this value */
  @ApiProperty({ example: 38 })
  rows: number;
  @ApiProperty({ type: () => PairedComparisonDto, example: { ...EXAMPLE_ROW_VERDICT, n: 38 } })
  row_verdict: PairedComparisonDto;
  @ApiProperty({ type: () => [PairedComparisonDto], example: [{ ...EXAMPLE_COMPARISON, n: 38 }] })
  metrics: PairedComparisonDto[];
}

export class DimensionComparisonDto {
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ type: () => [DimensionValueComparisonDto] })
  values: DimensionValueComparisonDto[];
}

export class DiffStatisticsDto {
  /** Significance level applied to p_adjusted */
  @ApiProperty({ example: 0.05 })
  alpha: number;
  /** Level of the bootstrap intervals */
  @ApiProperty({ example: 0.95 })
  confidence: number;
  @ApiProperty({ enum: ['holm'], example: 'holm' })
  correction: string;
  @ApiProperty({ example: 10 })
  min_rows: number;
  /** Rows present in both runs (new and missing rows are not compared) */
  @ApiProperty({ example: 214 })
  matched_rows: number;
  /** Row pass/fail under each run's pass rule */
  @ApiProperty({ type: () => PairedComparisonDto, example: EXAMPLE_ROW_VERDICT })
  row_verdict: PairedComparisonDto;
  @ApiProperty({ type: () => [PairedComparisonDto], example: [EXAMPLE_COMPARISON] })
  metrics: PairedComparisonDto[];
  /** The same per dimension value of the rows */
  @ApiProperty({ type: () => [DimensionComparisonDto] })
  by_dimension: DimensionComparisonDto[];
}

export class RunDiffResponse {
  @ApiProperty({ example: EXAMPLE_ID.baseRun })
  base_run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.run })
  candidate_run_id: string;
  /** Metrics compared (those of either run) */
  @ApiProperty({ example: [EXAMPLE_NAME.metricConfig, 'faithfulness', 'latency'] })
  metrics: string[];
  summary: DiffSummaryDto;
  /** Regressions first, then improvements, changes, new, missing, unchanged */
  @ApiProperty({ type: () => [DiffRowDto] })
  rows: DiffRowDto[];
  /** Rows matching `status` (all rows without it) */
  @ApiProperty({ example: 214 })
  total: number;
  @ApiProperty({ example: 100 })
  limit: number;
  @ApiProperty({ example: 0 })
  offset: number;
  /** Whether the changes are real, over every matched row (not only this page) */
  statistics: DiffStatisticsDto;
}

export class DiffSideDto {
  @ApiProperty({ enum: ['pending', 'done', 'error'], example: 'done' })
  status: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'Settings > Plan > Cancel.' })
  output: string | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  passed: boolean | null;
  @ApiProperty({ type: 'number', nullable: true, example: 980 })
  latency_ms: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { [EXAMPLE_NAME.metricConfig]: { score: 3, normalized: 0.5, passed: false } },
  })
  scores: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    nullable: true,
    example: null,
  })
  error: { code: string; message: string } | null;
}

export class RunDiffRowResponse {
  @ApiProperty({ example: EXAMPLE_ID.baseRun })
  base_run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.run })
  candidate_run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.rows[1] })
  row_id: string;
  @ApiProperty({ enum: DIFF_STATUSES, example: 'regressed' })
  status: string;
  /** The dataset row (from the candidate run, else the base) */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      question: 'How do I cancel my plan?',
      answer: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.',
      topic: 'cancellation',
      language: 'en',
    },
  })
  row: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true, example: 'How do I cancel my plan?' })
  input: string | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.',
  })
  expected_output: string | null;
  /** The first repetition of the row in each run; null when the run does not have the row */
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  base: DiffSideDto | null;
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  candidate: DiffSideDto | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' },
    example: { [EXAMPLE_NAME.metricConfig]: EXAMPLE_DELTA },
  })
  metrics: Record<string, MetricDeltaDto>;
}
