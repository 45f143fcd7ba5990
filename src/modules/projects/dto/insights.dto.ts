import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDate,
  IsIn,
  IsInt,
  IsString,
  Matches,
  Max,
  Min,
  MaxLength,
} from 'class-validator';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

/** A date-time of at most 64 characters as a Date; longer text stays text, which `@IsDate` refuses. */
const shortDate = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.length <= 64 ? new Date(value) : value;
const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const PAIR = /^[a-z][a-z0-9_]{0,63}:[a-z][a-z0-9_]{0,63}$/;
const TREND_STATES = ['queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'];

export class CoverageQuery {
  /** A value is a gap when fewer rows than this cover it (1..100000, default 1) */
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  min_rows?: number;

  /** Dimension pairs to cross, comma-separated `a:b` (at most 5), e.g. `topic:persona,topic:language` */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(701)
  @Matches(/^[a-z][a-z0-9_:,]{0,700}$/, { message: 'pairs must be comma-separated dimension:dimension pairs' })
  pairs?: string;
}

export class TrendRequest {
  /** Metric names to plot (default: every metric the runs scored; at most 20) */
  @ApiPropertyOptional({ example: [EXAMPLE_NAME.metricConfig, 'latency'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, { each: true, message: 'each metric must be a metric name' })
  metrics?: string[];

  /** Runs created at or after this time */
  @ApiPropertyOptional({ type: 'string', format: 'date-time', maxLength: 64, example: '2025-04-01T00:00:00.000Z' })
  @ValidateIfPresent()
  @Transform(shortDate)
  @IsDate()
  from?: Date;

  /** Runs created before this time */
  @ApiPropertyOptional({ type: 'string', format: 'date-time', maxLength: 64, example: '2025-06-01T00:00:00.000Z' })
  @ValidateIfPresent()
  @Transform(shortDate)
  @IsDate()
  to?: Date;

  /** A project dimension: one series per value (rows without a value are `null`) */
  @ApiPropertyOptional({ example: 'topic' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(64)
  @Matches(KEY, { message: 'group_by must be a dimension name' })
  group_by?: string;

  /** `run` (default): one point per run; `day` or `week`: runs pooled per UTC day or ISO week */
  @ApiPropertyOptional({ enum: ['run', 'day', 'week'], example: 'week' })
  @ValidateIfPresent()
  @IsIn(['run', 'day', 'week'])
  interval?: 'run' | 'day' | 'week';

  /** Run states included (default every state but `cancelled`) */
  @ApiPropertyOptional({ enum: TREND_STATES, isArray: true, example: ['succeeded', 'failed'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(6)
  @IsIn(TREND_STATES, { each: true })
  states?: string[];
}

export const COVERAGE_PAIR_PATTERN = PAIR;

export class CoverageValue {
  @ApiProperty({ example: 'billing' })
  value: string;
  /** Rows assigned this value */
  @ApiProperty({ example: 38 })
  rows: number;
  /** rows >= min_rows */
  @ApiProperty({ example: true })
  covered: boolean;
  /** Share of the counted rows (0..1) */
  @ApiProperty({ example: 0.18 })
  share: number;
}

export class CoverageDimension {
  @ApiProperty({ example: 'topic' })
  name: string;
  @ApiProperty({ type: [CoverageValue] })
  values: CoverageValue[];
  @ApiProperty({ example: 5 })
  covered_values: number;
  @ApiProperty({ example: 6 })
  total_values: number;
  /** Rows with no value of this dimension */
  @ApiProperty({ example: 13 })
  unassigned_rows: number;
  /** Values assigned in the data that the project's dimension does not list */
  @ApiProperty({ type: [CoverageValue] })
  other_values: CoverageValue[];
}

export class CoverageGap {
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ example: 'shipping' })
  value: string;
  @ApiProperty({ example: 0 })
  rows: number;
  /** Rows still needed to reach min_rows */
  @ApiProperty({ example: 1 })
  missing: number;
}

export class CoveragePairCell {
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: ['billing', 'new_customer'] })
  values: [string, string];
  @ApiProperty({ example: 11 })
  rows: number;
  @ApiProperty({ example: true })
  covered: boolean;
}

export class CoveragePair {
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: ['topic', 'customer_persona'] })
  dimensions: [string, string];
  @ApiProperty({ type: [CoveragePairCell] })
  cells: CoveragePairCell[];
  @ApiProperty({ example: 14 })
  covered_cells: number;
  @ApiProperty({ example: 18 })
  total_cells: number;
}

export class CoverageDataset {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.dataset })
  name: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.version })
  version_id: string | null;
  @ApiProperty({ example: 3 })
  version_number: number;
  /** `current` (the promoted version) or `latest` (none is promoted) */
  @ApiProperty({ enum: ['current', 'latest'], example: 'current' })
  version_source: 'current' | 'latest';
  @ApiProperty({ example: 214 })
  rows: number;
}

/** Which dimension values (and pairs) the project's data covers, and the gaps. */
export class ProjectCoverageResponse {
  @ApiProperty({ example: EXAMPLE_ID.project })
  project_id: string;
  @ApiProperty({ example: 1 })
  min_rows: number;
  @ApiProperty({ type: [CoverageDataset] })
  datasets: CoverageDataset[];
  @ApiProperty({ example: 214 })
  total_rows: number;
  @ApiProperty({ type: [CoverageDimension] })
  dimensions: CoverageDimension[];
  @ApiProperty({ type: [CoveragePair] })
  pairs: CoveragePair[];
  /** Values with fewer than min_rows rows, fewest first */
  @ApiProperty({ type: [CoverageGap] })
  gaps: CoverageGap[];
  /** Covered values / all values over every dimension (null when the project has no dimensions) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.83 })
  coverage_ratio: number | null;
}

export class TrendRun {
  @ApiProperty({ example: EXAMPLE_ID.run })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.run })
  name: string;
  @ApiProperty({ example: 'succeeded' })
  state: string;
  @ApiProperty({ example: EXAMPLE_ID.sut })
  sut_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class TrendPoint {
  /** The run's creation time, or the start of the day or week */
  @ApiProperty({ example: '2025-05-12T00:00:00.000Z' })
  at: string;
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: [EXAMPLE_ID.baseRun, EXAMPLE_ID.run] })
  run_ids: string[];
  /** Mean score over the scored rows */
  @ApiProperty({ example: 0.86 })
  mean: number;
  @ApiProperty({ example: 0.25 })
  min: number;
  @ApiProperty({ example: 1 })
  max: number;
  /** Rows scored */
  @ApiProperty({ example: 426 })
  count: number;
  /** Share of rows with a verdict that passed (null when none has one) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.92 })
  pass_rate: number | null;
}

export class TrendSeries {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  metric: string;
  /** The `group_by` value (null: rows without one, or no grouping) */
  @ApiProperty({ type: 'string', nullable: true, example: 'billing' })
  group: string | null;
  @ApiProperty({ type: [TrendPoint] })
  points: TrendPoint[];
}

/** Metric values over the project's runs, ready for a chart. */
export class ProjectTrendResponse {
  @ApiProperty({ example: EXAMPLE_ID.project })
  project_id: string;
  @ApiProperty({ enum: ['run', 'day', 'week'], example: 'week' })
  interval: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'topic' })
  group_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2025-04-01T00:00:00.000Z' })
  from: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2025-06-01T00:00:00.000Z' })
  to: Date | null;
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: [EXAMPLE_NAME.metricConfig, 'latency'] })
  metrics: string[];
  @ApiProperty({ type: [TrendRun] })
  runs: TrendRun[];
  @ApiProperty({ type: [TrendSeries] })
  series: TrendSeries[];
}
