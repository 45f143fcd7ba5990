import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsUUID, Max, Min } from 'class-validator';
import { EXAMPLE_ID, EXAMPLE_NAME } from '../../../../libs/common/openapi-examples.js';

/** How the example's judged metric moved on a regressed row. */
const EXAMPLE_DELTA = { base: 0.75, candidate: 0.5, delta: -0.25, base_passed: true, candidate_passed: false };

export const DIFF_STATUSES = ['regressed', 'improved', 'unchanged', 'changed', 'new', 'missing'] as const;

export class DiffQuery {
  /** The run compared against (e.g. the last release) */
  @IsUUID()
  base: string;

  /** The run under review */
  @IsUUID()
  candidate: string;

  /** Only rows of this status */
  @ApiPropertyOptional({ enum: DIFF_STATUSES })
  @IsOptional() @IsIn(DIFF_STATUSES)
  status?: (typeof DIFF_STATUSES)[number];

  /** A score move smaller than this is no move (default 1e-9) */
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0) @Max(1_000_000)
  tolerance?: number;

  /** Rows per page, 1..1000 (default 100) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
  offset?: number;
}

export class DiffExportQuery extends DiffQuery {
  /** csv (one line per row, a base/candidate/delta column triple per metric) or json (summary and every row); default csv */
  @ApiPropertyOptional({ enum: ['csv', 'json'] })
  @IsOptional() @IsIn(['csv', 'json'])
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
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' }, example: { [EXAMPLE_NAME.metricConfig]: EXAMPLE_DELTA } })
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
  @ApiProperty({ type: 'object', additionalProperties: true, example: { [EXAMPLE_NAME.metricConfig]: { score: 3, normalized: 0.5, passed: false } } })
  scores: Record<string, unknown>;
  @ApiProperty({ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, nullable: true, example: null })
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
  @ApiProperty({ type: 'object', additionalProperties: true, example: { question: 'How do I cancel my plan?', answer: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.', topic: 'cancellation', language: 'en' } })
  row: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true, example: 'How do I cancel my plan?' })
  input: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.' })
  expected_output: string | null;
  /** The first repetition of the row in each run; null when the run does not have the row */
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  base: DiffSideDto | null;
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  candidate: DiffSideDto | null;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' }, example: { [EXAMPLE_NAME.metricConfig]: EXAMPLE_DELTA } })
  metrics: Record<string, MetricDeltaDto>;
}
