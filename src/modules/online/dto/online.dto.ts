import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDateString,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { TARGET_LEVELS, type TargetLevel } from '#libs/evaluation/online/targets.js';
import { TargetMappingDto } from '../../traces/dto/span-mapping.dto.js';

/** Metrics an evaluator applies at most. */
export const MAX_EVALUATOR_METRICS = 20;
export const EXAMPLE_EVALUATOR_ID = '0196b1c2-3d4e-7f50-8a61-b2c3d4e5f601';
export const EXAMPLE_BACKFILL_ID = '0196b1c2-3d4e-7f50-8a61-b2c3d4e5f602';
const EXAMPLE_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

export class EvaluatorMetricDto {
  /** A metric config of the workspace or a built-in metric (`exact_match`, `answer_relevancy`, …) */
  @ApiProperty({ example: 'helpfulness' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  /** Over the metric config's threshold: the score at which a target passes */
  @ApiPropertyOptional({ type: 'number', nullable: true, example: null })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  threshold?: number | null;
}

export class EvaluatorBudgetDto {
  /** Targets with judged metrics scored per rolling hour, at most (each calls every judged metric's judge once); null: no limit */
  @ApiPropertyOptional({ type: 'integer', nullable: true, example: 600, minimum: 1, maximum: 1000000 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  judge_calls_per_hour?: number | null;

  /** Judge cost per rolling day in USD, at most, priced from the tokens the judge reports; null: no limit */
  @ApiPropertyOptional({ type: 'number', nullable: true, example: 5, minimum: 0.01, maximum: 1000000 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.01)
  @Max(1_000_000)
  cost_per_day_usd?: number | null;
}

export class EvaluatorRouteDto {
  /** The metric whose failure routes a target (null: any metric's) */
  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'helpfulness' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  metric?: string | null;

  /** A review queue of kind traces (or sessions) over this dataset: failing targets become its items */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: null })
  @IsOptional()
  @IsUUID()
  review_queue_id?: string | null;

  /** A test-case dataset: failing targets become staged rows (input, output, trace_id, scores), committed by a member */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: null })
  @IsOptional()
  @IsUUID()
  dataset_id?: string | null;
}

/** What an evaluator version scores and how: every member but the name, description and state. */
export class EvaluatorSpecFields {
  /** What one score is about: each matching span, each trace with a matching span, or each session */
  @ApiPropertyOptional({ enum: TARGET_LEVELS, example: 'trace' })
  @ValidateIfPresent()
  @IsIn(TARGET_LEVELS)
  level?: TargetLevel;

  /** A filter in the query language (docs/query-language.md) over spans; null: every span */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { field: 'kind', op: 'eq', value: 'llm' },
  })
  @IsOptional()
  @IsObject()
  filter?: Record<string, unknown> | null;

  /** The share of targets scored, 0..1, decided by the trace id (OpenTelemetry's consistent sampling), so the same traces everywhere */
  @ApiPropertyOptional({ example: 0.1, minimum: 0, maximum: 1 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  sampling_rate?: number;

  /** 1..20 metrics, each a metric config or a built-in */
  @ApiPropertyOptional({
    maxItems: MAX_EVALUATOR_METRICS,
    type: [EvaluatorMetricDto],
    example: [{ name: 'helpfulness' }],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_EVALUATOR_METRICS)
  @NestedObject(() => EvaluatorMetricDto, { each: true })
  metrics?: EvaluatorMetricDto[];

  /** The judge of judged metrics whose config names none */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  @IsOptional()
  @IsUUID()
  judge_id?: string | null;

  /** Where each metric input is read from the target's spans */
  @ApiPropertyOptional({ type: TargetMappingDto })
  @ValidateIfPresent()
  @NestedObject(() => TargetMappingDto)
  mapping?: TargetMappingDto;

  /** A trace whose root span has not ended is complete this long after its newest span (a session: always), 1..86400 seconds (default 30) */
  @ApiPropertyOptional({ example: 30, minimum: 1, maximum: 86400 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(86_400)
  quiet_seconds?: number;

  @ApiPropertyOptional({ type: EvaluatorBudgetDto })
  @ValidateIfPresent()
  @NestedObject(() => EvaluatorBudgetDto)
  budget?: EvaluatorBudgetDto;

  /** Where failing targets go: a review queue, a dataset, or both; null: nowhere */
  @ApiPropertyOptional({ type: EvaluatorRouteDto, nullable: true })
  @IsOptional()
  @NestedObject(() => EvaluatorRouteDto)
  route?: EvaluatorRouteDto | null;
}

export class CreateOnlineEvaluatorRequest extends EvaluatorSpecFields {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** The trace dataset whose landed spans are scored */
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  @IsUUID()
  dataset_id: string;

  @ApiProperty({ example: 'support-bot helpfulness' })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'Samples 10% of production answers for the helpfulness judge' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** `active` (default) scores what lands; `paused` takes nothing until resumed */
  @ApiPropertyOptional({ enum: ['active', 'paused'], example: 'active' })
  @ValidateIfPresent()
  @IsIn(['active', 'paused'])
  state?: 'active' | 'paused';
}

export class UpdateOnlineEvaluatorRequest extends EvaluatorSpecFields {
  @ApiPropertyOptional({ example: 'support-bot helpfulness' })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ example: 'Samples 10% of production answers for the helpfulness judge' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** `paused` stops taking and scoring targets (those taken stay pending); `active` resumes where it stopped */
  @ApiPropertyOptional({ enum: ['active', 'paused'], example: 'paused' })
  @ValidateIfPresent()
  @IsIn(['active', 'paused'])
  state?: 'active' | 'paused';
}

export class ListOnlineEvaluatorsQuery extends PageQueryDto {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ example: EXAMPLE_ID.dataset })
  @ValidateIfPresent()
  @IsUUID()
  dataset_id?: string;

  @ApiPropertyOptional({ enum: ['active', 'paused'] })
  @ValidateIfPresent()
  @IsIn(['active', 'paused'])
  state?: 'active' | 'paused';
}

export class EvaluatorSpecResponse {
  @ApiProperty({ enum: TARGET_LEVELS, example: 'trace' })
  level: TargetLevel;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: null })
  filter: Record<string, unknown> | null;
  @ApiProperty({ example: 0.1 })
  sampling_rate: number;
  @ApiProperty({ type: [EvaluatorMetricDto] })
  metrics: EvaluatorMetricDto[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  judge_id: string | null;
  /** The mapping as given (absent fields read their defaults) */
  @ApiProperty({ type: TargetMappingDto })
  mapping: TargetMappingDto;
  @ApiProperty({ example: 30 })
  quiet_seconds: number;
  @ApiProperty({ type: EvaluatorBudgetDto })
  budget: EvaluatorBudgetDto;
  @ApiProperty({ type: EvaluatorRouteDto, nullable: true })
  route: EvaluatorRouteDto | null;
}

export class EvaluatorTargetCounts {
  /** Sampled, waiting to be complete or to be scored */
  @ApiProperty({ example: 3 })
  pending: number;
  @ApiProperty({ example: 412 })
  scored: number;
  /** Not scored on purpose: over budget, superseded by a newer version, gone from the dataset */
  @ApiProperty({ example: 0 })
  skipped: number;
  /** A metric could not score it and it was given up */
  @ApiProperty({ example: 0 })
  failed: number;
}

export class EvaluatorProgress {
  /** The ordinal of the last span read from the dataset */
  @ApiProperty({ example: 18234 })
  cursor_ordinal: number;
  @ApiProperty({ example: 18235 })
  spans_read: number;
  /** Traces whose root span was read (each trace once) */
  @ApiProperty({ example: 4120 })
  traces_seen: number;
  /** Targets the filter matched and the sampling rate took, each once */
  @ApiProperty({ example: 415 })
  targets_sampled: number;
}

export class OnlineEvaluatorResponse {
  @ApiProperty({ example: EXAMPLE_EVALUATOR_ID })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: 'support-bot helpfulness' })
  name: string;
  @ApiProperty({ example: '' })
  description: string;
  @ApiProperty({ enum: ['active', 'paused'], example: 'active' })
  state: 'active' | 'paused';
  /**
   * `judge_unreachable`: the judge did not answer, targets wait (pending) and are tried again;
   * `budget_exhausted`: targets are skipped until the budget's window frees; `misconfigured`: a
   * metric, judge, custom op or secret it names is gone, nothing is taken until the evaluator is changed
   */
  @ApiProperty({ enum: ['ok', 'judge_unreachable', 'budget_exhausted', 'misconfigured'], example: 'ok' })
  status: 'ok' | 'judge_unreachable' | 'budget_exhausted' | 'misconfigured';
  @ApiProperty({ type: 'string', nullable: true, example: null })
  status_detail: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  status_since: Date | null;
  /** The current version: what new targets are scored by */
  @ApiProperty({ example: 1 })
  version: number;
  @ApiProperty({ type: EvaluatorSpecResponse })
  spec: EvaluatorSpecResponse;
  @ApiProperty({ type: EvaluatorProgress })
  progress: EvaluatorProgress;
  /** The current version's targets by state */
  @ApiProperty({ type: EvaluatorTargetCounts })
  targets: EvaluatorTargetCounts;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class EvaluatorVersionResponse {
  @ApiProperty({ example: 1 })
  version: number;
  @ApiProperty({ type: EvaluatorSpecResponse })
  spec: EvaluatorSpecResponse;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class EvaluatorVersionList {
  @ApiProperty({ type: [EvaluatorVersionResponse] })
  items: EvaluatorVersionResponse[];
}

export const TARGET_STATES = ['pending', 'scored', 'skipped', 'failed'] as const;

export class ListEvaluatorTargetsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: TARGET_STATES })
  @ValidateIfPresent()
  @IsIn(TARGET_STATES)
  state?: (typeof TARGET_STATES)[number];

  @ApiPropertyOptional({ example: 1, minimum: 1, maximum: 1000000 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  version?: number;

  @ApiPropertyOptional({ example: EXAMPLE_BACKFILL_ID })
  @ValidateIfPresent()
  @IsUUID()
  backfill_id?: string;

  @ApiPropertyOptional({ example: EXAMPLE_TRACE_ID })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(256)
  trace_id?: string;
}

export class EvaluatorTargetResponse {
  /** The trace id, `trace_id/span_id` for a span, or the session id */
  @ApiProperty({ example: EXAMPLE_TRACE_ID })
  target_key: string;
  @ApiProperty({ example: 1 })
  evaluator_version: number;
  @ApiProperty({ enum: TARGET_LEVELS, example: 'trace' })
  level: TargetLevel;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_TRACE_ID })
  trace_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  span_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  session_id: string | null;
  @ApiProperty({ enum: ['continuous', 'backfill'], example: 'continuous' })
  origin: 'continuous' | 'backfill';
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  backfill_id: string | null;
  @ApiProperty({ enum: TARGET_STATES, example: 'scored' })
  state: (typeof TARGET_STATES)[number];
  /** Why it was skipped or failed, or why it waits */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
  /** Whether its end was seen (a trace's root span ended) */
  @ApiProperty({ example: true })
  complete: boolean;
  @ApiProperty({ example: 1 })
  attempts: number;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  finished_at: Date | null;
}

export class CreateBackfillRequest {
  /** Targets whose spans started at or after this time */
  @ApiProperty({ example: '2026-11-01T00:00:00Z' })
  @MaxLength(64)
  @IsDateString({ strict: true })
  from: string;

  /** …and before this time (at most 366 days after `from`) */
  @ApiProperty({ example: '2026-11-08T00:00:00Z' })
  @MaxLength(64)
  @IsDateString({ strict: true })
  to: string;
}

export class BackfillProgress {
  @ApiProperty({ example: 52000 })
  spans_read: number;
  /** Targets the backfill sampled, including those already scored by the same version */
  @ApiProperty({ example: 520 })
  targets_sampled: number;
  @ApiProperty({ type: EvaluatorTargetCounts })
  targets: EvaluatorTargetCounts;
}

export class BackfillResponse {
  @ApiProperty({ example: EXAMPLE_BACKFILL_ID })
  id: string;
  @ApiProperty({ example: EXAMPLE_EVALUATOR_ID })
  evaluator_id: string;
  /** The evaluator version it scores with (the current one when it was asked for) */
  @ApiProperty({ example: 1 })
  evaluator_version: number;
  @ApiProperty({ example: '2026-11-01T00:00:00.000Z' })
  from: Date;
  @ApiProperty({ example: '2026-11-08T00:00:00.000Z' })
  to: Date;
  @ApiProperty({ enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'], example: 'queued' })
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    example: null,
  })
  failure: { code: string; message: string } | null;
  @ApiProperty({ type: BackfillProgress })
  progress: BackfillProgress;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  started_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  finished_at: Date | null;
}
