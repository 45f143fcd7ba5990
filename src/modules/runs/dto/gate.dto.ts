import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { StatisticsQuery } from './diff.dto.js';

export const GATE_FORMATS = ['json', 'markdown', 'junit'] as const;
export type GateFormat = (typeof GATE_FORMATS)[number];

export class GateQuery extends StatisticsQuery {
  /** The project whose test plan judges the run (default: the one project with a test plan linking the run's SUT or dataset; without one, the run's own pass rule judges) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.project })
  @IsOptional()
  @IsUUID()
  project_id?: string;

  /** A run to compare against (the last release): the gate fails on a significant regression of a gating metric or the row verdict, overall or on a dimension value */
  @ApiPropertyOptional({ example: EXAMPLE_ID.baseRun })
  @IsOptional()
  @IsUUID()
  baseline_run_id?: string;

  /** json (default), markdown (a pull-request comment) or junit (JUnit XML); wins over the Accept header (application/json, text/markdown, application/xml) */
  @ApiPropertyOptional({ enum: GATE_FORMATS })
  @IsOptional()
  @IsIn(GATE_FORMATS)
  format?: GateFormat;
}

export class GateCheckDto {
  /** run_state (the run succeeded), threshold (a metric's mean), dimension_threshold (its mean on one dimension value), release_rule (min_metrics_passing), metric_pass_rate (without a test plan: a metric's min_pass_rate of the run's pass rule), row_pass_rate, regression (against the baseline), judge_validity (the plan requires the judge's validation against human labels), corrected_pass_rate (for information: a validated judge's pass rate corrected for its errors, with its interval in ci_low..ci_high) */
  @ApiProperty({
    enum: [
      'run_state',
      'threshold',
      'dimension_threshold',
      'release_rule',
      'metric_pass_rate',
      'row_pass_rate',
      'regression',
      'judge_validity',
      'corrected_pass_rate',
    ],
    example: 'dimension_threshold',
  })
  kind: string;
  /** skipped: nothing to check (no rows of the value, too few rows to test) */
  @ApiProperty({ enum: ['pass', 'fail', 'skipped'], example: 'fail' })
  status: string;
  /** Whether a failure fails the gate (a non-blocking failure is a warning) */
  @ApiProperty({ example: true })
  blocking: boolean;
  /** The metric (`row_verdict` for the rows' pass/fail) */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.metricConfig })
  metric: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'topic' })
  dimension: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'billing' })
  value: string | null;
  @ApiProperty({ enum: ['>=', '<='], nullable: true, example: '>=' })
  operator: string | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.9 })
  threshold: number | null;
  /** The run's value (a mean, a pass rate, a count of metrics passing) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.42 })
  observed: number | null;
  /** Regressions: candidate - baseline over the matched rows, its 95% bootstrap interval and the paired test */
  @ApiProperty({ type: 'number', nullable: true, example: null })
  mean_delta: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  ci_low: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  ci_high: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  p_value: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  p_adjusted: number | null;
  @ApiProperty({ example: `${EXAMPLE_NAME.metricConfig} on topic=billing: mean 0.42 misses >= 0.9` })
  message: string;
}

export class GateTestPlanDto {
  @ApiProperty({ example: EXAMPLE_ID.testPlan })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  name: string;
  @ApiProperty({ example: 2 })
  version: number;
}

export class GateResponse {
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  /** The project whose plan judged the run; null when none was named or found */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.project })
  project_id: string | null;
  /** The test plan version that judged the run; null: the run's own pass rule did (the project carries no plan, or no project links the run) */
  @ApiProperty({ type: () => GateTestPlanDto, nullable: true })
  test_plan: GateTestPlanDto | null;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.baseRun })
  baseline_run_id: string | null;
  @ApiProperty({ example: 0.05 })
  alpha: number;
  /** fail when any blocking check failed */
  @ApiProperty({ enum: ['pass', 'fail'], example: 'fail' })
  verdict: string;
  /** Blocking checks that failed */
  @ApiProperty({ example: 1 })
  failures: number;
  /** Non-blocking checks that failed */
  @ApiProperty({ example: 0 })
  warnings: number;
  /** Every check, in order: run state, thresholds (each metric, then its dimension values) and release rule, or the run's pass rule without a plan; row pass rate; regressions */
  @ApiProperty({ type: () => [GateCheckDto] })
  checks: GateCheckDto[];
}
