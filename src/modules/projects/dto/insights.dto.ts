import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDate, IsIn, IsInt, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';

const present = (_: object, value: unknown) => value !== undefined;
const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const PAIR = /^[a-z][a-z0-9_]{0,63}:[a-z][a-z0-9_]{0,63}$/;

export class CoverageQuery {
  /** A value is a gap when fewer rows than this cover it (1..100000, default 1) */
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(1) @Max(100_000)
  min_rows?: number;

  /** Dimension pairs to cross, comma-separated `a:b` (at most 5), e.g. `topic:persona,topic:language` */
  @ValidateIf(present) @IsString() @Matches(/^[a-z][a-z0-9_:,]{0,700}$/, { message: 'pairs must be comma-separated dimension:dimension pairs' })
  pairs?: string;
}

export class TrendRequest {
  /** Metric names to plot (default: every metric the runs scored; at most 20) */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @IsString({ each: true }) @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, { each: true, message: 'each metric must be a metric name' })
  metrics?: string[];

  /** Runs created at or after this time */
  @ApiPropertyOptional({ type: 'string', format: 'date-time' })
  @ValidateIf(present) @Type(() => Date) @IsDate()
  from?: Date;

  /** Runs created before this time */
  @ApiPropertyOptional({ type: 'string', format: 'date-time' })
  @ValidateIf(present) @Type(() => Date) @IsDate()
  to?: Date;

  /** A project dimension: one series per value (rows without a value are `null`) */
  @ValidateIf(present) @IsString() @Matches(KEY, { message: 'group_by must be a dimension name' })
  group_by?: string;

  /** `run` (default): one point per run; `day` or `week`: runs pooled per UTC day or ISO week */
  @ApiPropertyOptional({ enum: ['run', 'day', 'week'] })
  @ValidateIf(present) @IsIn(['run', 'day', 'week'])
  interval?: 'run' | 'day' | 'week';

  /** Run states included (default every state but `cancelled`) */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(6) @IsIn(['queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'], { each: true })
  states?: string[];
}

export const COVERAGE_PAIR_PATTERN = PAIR;

export class CoverageValue {
  value: string;
  /** Rows assigned this value */
  rows: number;
  /** rows >= min_rows */
  covered: boolean;
  /** Share of the counted rows (0..1) */
  share: number;
}

export class CoverageDimension {
  name: string;
  @ApiProperty({ type: [CoverageValue] })
  values: CoverageValue[];
  covered_values: number;
  total_values: number;
  /** Rows with no value of this dimension */
  unassigned_rows: number;
  /** Values assigned in the data that the project's dimension does not list */
  @ApiProperty({ type: [CoverageValue] })
  other_values: CoverageValue[];
}

export class CoverageGap {
  dimension: string;
  value: string;
  rows: number;
  /** Rows still needed to reach min_rows */
  missing: number;
}

export class CoveragePairCell {
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  values: [string, string];
  rows: number;
  covered: boolean;
}

export class CoveragePair {
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  dimensions: [string, string];
  @ApiProperty({ type: [CoveragePairCell] })
  cells: CoveragePairCell[];
  covered_cells: number;
  total_cells: number;
}

export class CoverageDataset {
  dataset_id: string;
  name: string;
  @ApiProperty({ type: 'string', nullable: true })
  version_id: string | null;
  version_number: number;
  /** `current` (the promoted version) or `latest` (none is promoted) */
  @ApiProperty({ enum: ['current', 'latest'] })
  version_source: 'current' | 'latest';
  rows: number;
}

/** Which dimension values (and pairs) the project's data covers, and the gaps. */
export class ProjectCoverageResponse {
  project_id: string;
  min_rows: number;
  @ApiProperty({ type: [CoverageDataset] })
  datasets: CoverageDataset[];
  total_rows: number;
  @ApiProperty({ type: [CoverageDimension] })
  dimensions: CoverageDimension[];
  @ApiProperty({ type: [CoveragePair] })
  pairs: CoveragePair[];
  /** Values with fewer than min_rows rows, fewest first */
  @ApiProperty({ type: [CoverageGap] })
  gaps: CoverageGap[];
  /** Covered values / all values over every dimension (null when the project has no dimensions) */
  @ApiProperty({ type: 'number', nullable: true })
  coverage_ratio: number | null;
}

export class TrendRun {
  id: string;
  name: string;
  state: string;
  sut_id: string;
  dataset_id: string;
  created_at: Date;
}

export class TrendPoint {
  /** The run's creation time, or the start of the day or week */
  at: string;
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  run_ids: string[];
  /** Mean score over the scored rows */
  mean: number;
  min: number;
  max: number;
  /** Rows scored */
  count: number;
  /** Share of rows with a verdict that passed (null when none has one) */
  @ApiProperty({ type: 'number', nullable: true })
  pass_rate: number | null;
}

export class TrendSeries {
  metric: string;
  /** The `group_by` value (null: rows without one, or no grouping) */
  @ApiProperty({ type: 'string', nullable: true })
  group: string | null;
  @ApiProperty({ type: [TrendPoint] })
  points: TrendPoint[];
}

/** Metric values over the project's runs, ready for a chart. */
export class ProjectTrendResponse {
  project_id: string;
  @ApiProperty({ enum: ['run', 'day', 'week'] })
  interval: string;
  @ApiProperty({ type: 'string', nullable: true })
  group_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  from: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  to: Date | null;
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  metrics: string[];
  @ApiProperty({ type: [TrendRun] })
  runs: TrendRun[];
  @ApiProperty({ type: [TrendSeries] })
  series: TrendSeries[];
}
