import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsUUID, Max, Min } from 'class-validator';

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
  @ApiProperty({ type: 'number', nullable: true })
  base: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  candidate: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  delta: number | null;
  @ApiProperty({ type: 'boolean', nullable: true })
  base_passed: boolean | null;
  @ApiProperty({ type: 'boolean', nullable: true })
  candidate_passed: boolean | null;
}

export class DiffRowDto {
  row_id: string;
  @ApiProperty({ enum: DIFF_STATUSES })
  status: string;
  @ApiProperty({ type: 'boolean', nullable: true })
  base_passed: boolean | null;
  @ApiProperty({ type: 'boolean', nullable: true })
  candidate_passed: boolean | null;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' } })
  metrics: Record<string, MetricDeltaDto>;
  output_changed: boolean;
}

export class DiffMetricSummaryDto {
  name: string;
  @ApiProperty({ type: 'number', nullable: true })
  base_mean: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  candidate_mean: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  delta: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  base_pass_rate: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  candidate_pass_rate: number | null;
  regressions: number;
  improvements: number;
}

export class DiffSummaryDto {
  rows: number;
  regressed: number;
  improved: number;
  unchanged: number;
  changed: number;
  new: number;
  missing: number;
  @ApiProperty({ type: () => [DiffMetricSummaryDto] })
  metrics: DiffMetricSummaryDto[];
}

export class RunDiffResponse {
  base_run_id: string;
  candidate_run_id: string;
  /** Metrics compared (those of either run) */
  metrics: string[];
  summary: DiffSummaryDto;
  /** Regressions first, then improvements, changes, new, missing, unchanged */
  @ApiProperty({ type: () => [DiffRowDto] })
  rows: DiffRowDto[];
  /** Rows matching `status` (all rows without it) */
  total: number;
  limit: number;
  offset: number;
}

export class DiffSideDto {
  @ApiProperty({ enum: ['pending', 'done', 'error'] })
  status: string;
  @ApiProperty({ type: 'string', nullable: true })
  output: string | null;
  @ApiProperty({ type: 'boolean', nullable: true })
  passed: boolean | null;
  @ApiProperty({ type: 'number', nullable: true })
  latency_ms: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  scores: Record<string, unknown>;
  @ApiProperty({ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, nullable: true })
  error: { code: string; message: string } | null;
}

export class RunDiffRowResponse {
  base_run_id: string;
  candidate_run_id: string;
  row_id: string;
  @ApiProperty({ enum: DIFF_STATUSES })
  status: string;
  /** The dataset row (from the candidate run, else the base) */
  @ApiProperty({ type: 'object', additionalProperties: true })
  row: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true })
  input: string | null;
  @ApiProperty({ type: 'string', nullable: true })
  expected_output: string | null;
  /** The first repetition of the row in each run; null when the run does not have the row */
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  base: DiffSideDto | null;
  @ApiProperty({ type: () => DiffSideDto, nullable: true })
  candidate: DiffSideDto | null;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/MetricDeltaDto' } })
  metrics: Record<string, MetricDeltaDto>;
}
