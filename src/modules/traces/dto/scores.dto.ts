import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDateString, IsIn, IsInt, IsNumber, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_TRACE } from '#libs/common/openapi-examples.js';
import { PageQueryDto } from '#libs/common/pagination.js';

/** The limits of the score routes, enforced with 400 and listed in docs/traces.md#scores. */
export const SCORE_LIMITS = {
  idLength: 128,
  nameLength: 200,
  /** Buckets one aggregation may span (hours or days between `from` and `to`). */
  buckets: 1000,
  /** (bucket, group) rows one aggregation may answer. */
  rows: 10_000,
} as const;

const EXAMPLE_EVALUATOR = '3f2a9c1e-7b4d-4e8a-9c61-0d5e2f7a8b90';

/** One score record: what an evaluator version's metric said of a span, a trace or a session. */
export class TraceScoreResponse {
  @ApiProperty({ example: 'a41c6e07-58d2-4f0b-9e3a-6c1d2b7f8e90' })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The trace dataset the scored spans landed in */
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_EVALUATOR })
  evaluator_id: string;
  @ApiProperty({ example: 'answer-quality' })
  evaluator_name: string;
  @ApiProperty({ example: 3 })
  evaluator_version: number;
  /** What was scored: one span, a whole trace or a session */
  @ApiProperty({ enum: ['span', 'trace', 'session'], example: 'trace' })
  level: string;
  /** The scored target's key (the trace id for a trace, `trace_id/span_id` for a span, the session id for a session) */
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  target_key: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_TRACE.trace })
  trace_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  span_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'session-8812' })
  session_id: string | null;
  @ApiProperty({ example: 'helpfulness' })
  metric: string;
  /** The metric's score (null when it could not score: see `error`) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.4 })
  score: number | null;
  /** Whether the score passed the metric's threshold (null without a verdict) */
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  passed: boolean | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'partially_helpful' })
  label: string | null;
  /** The judge's reasoning, when the metric gives one */
  @ApiProperty({ type: 'string', nullable: true, example: 'The answer names the setting but not where to find it.' })
  reason: string | null;
  /** Why the metric could not score the target (then `score` and `passed` are null) */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  error: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: null })
  detail: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'support-bot' })
  service_name: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'gpt-4o-mini' })
  model: string | null;
  /** What scoring cost (a judge's tokens at its model's price) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.00021 })
  cost_usd: number | null;
  /** When the scored trace started: windows, aggregates and retention go by it */
  @ApiProperty({ example: EXAMPLE_AT.started })
  observed_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  scored_at: Date;
}

/** GET /traces/scores: filters, newest observed first. */
export class TraceScoresQuery extends PageQueryDto {
  /** The workspace, with a user's token (an API key's own workspace is used otherwise) */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  workspace_id?: string;
  /** Only scores of this dataset of the workspace */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  dataset_id?: string;
  @ApiPropertyOptional({ maxLength: SCORE_LIMITS.idLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(SCORE_LIMITS.idLength)
  trace_id?: string;
  @ApiPropertyOptional({ maxLength: SCORE_LIMITS.idLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(SCORE_LIMITS.idLength)
  session_id?: string;
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  evaluator_id?: string;
  @ApiPropertyOptional({ maxLength: SCORE_LIMITS.nameLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(SCORE_LIMITS.nameLength)
  evaluator_name?: string;
  @ApiPropertyOptional({ maxLength: SCORE_LIMITS.nameLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(SCORE_LIMITS.nameLength)
  metric?: string;
  /** `true`: only passes; `false`: only failures (scores without a verdict match neither) */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent()
  @IsIn(['true', 'false'])
  passed?: 'true' | 'false';
  /** Scores at least this */
  @ApiPropertyOptional({ type: 'number' })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  min_score?: number;
  /** Scores at most this */
  @ApiPropertyOptional({ type: 'number' })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  max_score?: number;
  /** `true`: only records whose metric could not score; `false`: only the others */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent()
  @IsIn(['true', 'false'])
  has_error?: 'true' | 'false';
  /** Traces that started at or after this instant */
  @ApiPropertyOptional({ format: 'date-time' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsDateString({ strict: true })
  observed_after?: string;
  /** Traces that started before this instant */
  @ApiPropertyOptional({ format: 'date-time' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsDateString({ strict: true })
  observed_before?: string;
}

/** GET /traces/scores:aggregate: one evaluator's metric over a window, by bucket and group. */
export class TraceScoresAggregateQuery {
  /** The workspace, with a user's token (an API key's own workspace is used otherwise) */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  workspace_id?: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_EVALUATOR })
  @IsUUID()
  evaluator_id: string;
  @ApiProperty({ maxLength: SCORE_LIMITS.nameLength, example: 'helpfulness' })
  @IsString()
  @MaxLength(SCORE_LIMITS.nameLength)
  metric: string;
  /** The window's start (inclusive), by the traces' start time */
  @ApiProperty({ format: 'date-time', example: '2026-11-01T00:00:00Z' })
  @MaxLength(64)
  @IsDateString({ strict: true })
  from: string;
  /** The window's end (exclusive) */
  @ApiProperty({ format: 'date-time', example: '2026-11-08T00:00:00Z' })
  @MaxLength(64)
  @IsDateString({ strict: true })
  to: string;
  /** `hour` or `day` (aligned to UTC midnight; at most 1000 in the window), or `none`: the whole window (default) */
  @ApiPropertyOptional({ enum: ['hour', 'day', 'none'], default: 'none' })
  @ValidateIfPresent()
  @IsIn(['hour', 'day', 'none'])
  bucket?: 'hour' | 'day' | 'none';
  /** Split each bucket by the trace's service, its model, or each of its tags (a trace of two tags counts in both) */
  @ApiPropertyOptional({ enum: ['service', 'model', 'tag'] })
  @ValidateIfPresent()
  @IsIn(['service', 'model', 'tag'])
  group_by?: 'service' | 'model' | 'tag';
  /** Only scores of this dataset of the workspace */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  dataset_id?: string;
  /** Only this version of the evaluator (default: every version, so a trace two versions scored counts twice) */
  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000, example: 3 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  evaluator_version?: number;
}

/** A 95% interval. */
export class ScoreInterval {
  @ApiProperty({ example: 0.52 })
  low: number;
  @ApiProperty({ example: 0.71 })
  high: number;
}

/** One bucket (and group) of an aggregation. */
export class TraceScoreBucket {
  /** The bucket's start: a whole hour or day (UTC), or the window's start with `bucket=none` */
  @ApiProperty({ example: '2026-11-01T00:00:00.000Z' })
  start: Date;
  /** The bucket's end (exclusive) */
  @ApiProperty({ example: '2026-11-02T00:00:00.000Z' })
  end: Date;
  /** The service, model or tag of this group; null for traces without one, and when not grouped */
  @ApiProperty({ type: 'string', nullable: true, example: 'support-bot' })
  group: string | null;
  /** Score records (errors included) */
  @ApiProperty({ example: 120 })
  n: number;
  /** Records with a score */
  @ApiProperty({ example: 117 })
  scored: number;
  /** Records whose metric could not score */
  @ApiProperty({ example: 3 })
  errored: number;
  @ApiProperty({ example: 74 })
  passed: number;
  @ApiProperty({ example: 43 })
  failed: number;
  /** passed / (passed + failed); null without a verdict */
  @ApiProperty({ type: 'number', nullable: true, example: 0.6325 })
  pass_rate: number | null;
  /** Wilson's 95% score interval of the pass rate */
  @ApiProperty({ type: ScoreInterval, nullable: true })
  pass_rate_interval: ScoreInterval | null;
  /** The mean score; null without scores */
  @ApiProperty({ type: 'number', nullable: true, example: 0.61 })
  mean: number | null;
  /** Student's t 95% interval of the mean (null below two scores) */
  @ApiProperty({ type: ScoreInterval, nullable: true })
  mean_interval: ScoreInterval | null;
  /** The scores' sample standard deviation (null below two scores) */
  @ApiProperty({ type: 'number', nullable: true, example: 0.22 })
  sd: number | null;
}

export class TraceScoreAggregateResponse {
  @ApiProperty({ example: EXAMPLE_EVALUATOR })
  evaluator_id: string;
  @ApiProperty({ example: 'helpfulness' })
  metric: string;
  @ApiProperty({ example: '2026-11-01T00:00:00.000Z' })
  from: Date;
  @ApiProperty({ example: '2026-11-08T00:00:00.000Z' })
  to: Date;
  @ApiProperty({ enum: ['hour', 'day', 'none'], example: 'day' })
  bucket: 'hour' | 'day' | 'none';
  @ApiProperty({ type: 'string', enum: ['service', 'model', 'tag'], nullable: true, example: 'service' })
  group_by: 'service' | 'model' | 'tag' | null;
  /** The buckets that hold scores, by start then group (null last) */
  @ApiProperty({ type: [TraceScoreBucket] })
  buckets: TraceScoreBucket[];
}

/** What one evaluator's metric says of a trace, beside its enrichment: its newest score record. */
export interface TraceScoreOfTrace {
  score: number | null;
  passed: boolean | null;
  label: string | null;
  evaluator_version: number;
}
