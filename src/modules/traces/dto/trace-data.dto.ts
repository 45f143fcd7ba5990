import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { ANY_JSON as ANY, boundedJsonSchema, IsBoundedJson, NestedObject } from '#libs/common/record-validators.js';

/** A ground-truth item's expected output, as JSON. */
const EXPECTED_OUTPUT_LIMIT = 64_000;
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_TRACE } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { INGEST_STATES, OPEN } from './traces.dto.js';

/* What is read and written on a landed trace dataset: ground truth, the current version, topology, enrichment and tags. */

export class GroundTruthItem {
  /** A trace of the version */
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  trace_id: string;

  /** What the trace should have produced: text or any JSON */
  @ApiProperty({
    ...boundedJsonSchema(ANY, EXPECTED_OUTPUT_LIMIT),
    description: 'text or any JSON value',
    example: 'Your refund was issued on 12 May and reaches your card within 5 business days.',
  })
  @ValidateIf(() => true)
  @IsBoundedJson(EXPECTED_OUTPUT_LIMIT)
  expected_output: unknown;

  @ApiPropertyOptional({ example: 'Checked against the billing system' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(4000)
  notes?: string;

  /** Labels of the expectation (e.g. `resolved`, `escalate`) */
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(8_000)
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { outcome: 'resolved' } })
  labels?: Record<string, unknown>;
}

export class CreateGroundTruthRequest {
  /** Expected outputs, one per trace (at most 10000); a new ground-truth version replaces the whole set */
  @ApiProperty({ type: [GroundTruthItem] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(10_000)
  @NestedObject(() => GroundTruthItem, { each: true })
  items: GroundTruthItem[];

  @ApiPropertyOptional({ example: 'Refund conversations reviewed by the billing team' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

export class TraceGroundTruthVersionResponse {
  @ApiProperty({ example: EXAMPLE_ID.groundTruth })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string;
  /** 1, 2, 3, ... per trace version */
  @ApiProperty({ example: 2 })
  number: number;
  @ApiProperty({ example: 48 })
  item_count: number;
  @ApiProperty({ example: 'Refund conversations reviewed by the billing team' })
  message: string;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class TraceGroundTruthResponse extends TraceGroundTruthVersionResponse {
  @ApiProperty({ type: [GroundTruthItem] })
  items: GroundTruthItem[];
  /** Every ground-truth version of this trace version, newest first */
  @ApiProperty({ type: [Number], example: [2, 1] })
  versions: number[];
}

export class GroundTruthQuery {
  /** A ground-truth version number (default: the newest) */
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  number?: number;
}

export class TraceCurrentVersionResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  /** The dataset's current version now */
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string;
  @ApiProperty({ example: 4 })
  number: number;
  @ApiProperty({ example: 'current' })
  state: string;
  /** The version that was current before (null if none) */
  @ApiProperty({ example: 'd6a0f5e2-3c1b-4e7a-9f8d-2b4c6e8a0f13' })
  previous_version_id: string | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  promoted_at: Date;
}

class LatencyStatsDto {
  @ApiProperty({ example: 1180 })
  mean: number;
  @ApiProperty({ example: 1040 })
  p50: number;
  @ApiProperty({ example: 2310 })
  p95: number;
  @ApiProperty({ example: 2710 })
  p99: number;
  @ApiProperty({ example: 4120 })
  max: number;
}

class TopologyNodeDto {
  @ApiProperty({ example: 'llm:gpt-4o-mini' })
  id: string;
  @ApiProperty({ example: 'llm' })
  kind: string;
  @ApiProperty({ example: 'gpt-4o-mini' })
  name: string;
  @ApiProperty({ example: 412 })
  calls: number;
  @ApiProperty({ example: 3 })
  errors: number;
  @ApiProperty({ example: 0.0073 })
  error_rate: number;
  /** Distinct service.name values of the component's spans */
  @ApiProperty({ example: ['support-bot'] })
  service_names: string[];
  latency_ms: LatencyStatsDto;
}

class TopologyEdgeDto {
  @ApiProperty({ example: 'agent:support-bot' })
  source: string;
  @ApiProperty({ example: 'llm:gpt-4o-mini' })
  target: string;
  @ApiProperty({ example: 412 })
  calls: number;
  @ApiProperty({ example: 3 })
  errors: number;
  @ApiProperty({ example: 0.0073 })
  error_rate: number;
  latency_ms: LatencyStatsDto;
}

export class TopologyGraph {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string;
  @ApiProperty({ example: 96 })
  trace_count: number;
  @ApiProperty({ example: 1180 })
  span_count: number;
  @ApiProperty({ type: [TopologyNodeDto] })
  nodes: TopologyNodeDto[];
  @ApiProperty({ type: [TopologyEdgeDto] })
  edges: TopologyEdgeDto[];
  @ApiProperty({ type: 'array', items: OPEN, example: [{ id: 'agent:support-bot', calls: 96 }] })
  roots: Array<Record<string, unknown>>;
  /** Spans whose parent is not in the version (treated as roots) */
  @ApiProperty({ example: 0 })
  orphan_spans: number;
}

export class TopologyQuery {
  /** Only traces with this tag */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  tag?: string;
}

class EnrichmentFieldDto {
  @ApiProperty({ example: 'cost' })
  name: string;
  @ApiProperty({ example: 'number' })
  type: string;
  @ApiProperty({ example: 'Cost of the trace in USD, from token usage and model prices' })
  description: string;
}

export class TraceEnrichmentStatusResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string;
  /** `not_started` until a landing or a recompute queued one */
  @ApiProperty({ enum: ['not_started', ...INGEST_STATES], example: 'succeeded' })
  state: string;
  @ApiProperty({ example: EXAMPLE_ID.traceIngestRun })
  run_id: string | null;
  @ApiProperty({ example: 96 })
  traces_total: number;
  @ApiProperty({ example: 96 })
  traces_done: number;
  /** traces_done / traces_total, 0..1 */
  @ApiProperty({ example: 1 })
  progress: number;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, example: null })
  prices: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, example: null })
  error: Record<string, unknown> | null;
  @ApiProperty({ example: EXAMPLE_AT.started })
  started_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  finished_at: Date | null;
  @ApiProperty({ type: [EnrichmentFieldDto] })
  fields: EnrichmentFieldDto[];
}

export class RecomputeEnrichmentRequest {
  /** Model -> USD per 1M input and output tokens, over the built-in table (matched by model prefix) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: {
      type: 'object',
      required: ['input_per_1m', 'output_per_1m'],
      properties: { input_per_1m: { type: 'number', minimum: 0 }, output_per_1m: { type: 'number', minimum: 0 } },
    },
    example: { 'my-finetune': { input_per_1m: 0.3, output_per_1m: 1.2 } },
  })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(32_000)
  prices?: Record<string, { input_per_1m: number; output_per_1m: number }>;
}

export const ENRICHMENT_SORTS = [
  'duration_ms',
  'cost',
  'tokens_total',
  'error_count',
  'span_count',
  'start_time',
  'trace_id',
] as const;

export class EnrichmentResultsQuery {
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  trace_id?: string;
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  session_id?: string;
  /** true: only traces with an error span; false: only those without */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent()
  @IsIn(['true', 'false'])
  has_error?: 'true' | 'false';
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent()
  @IsIn(['true', 'false'])
  loop_detected?: 'true' | 'false';
  /** A model any LLM span of the trace used */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  model?: string;
  /** Only traces with this tag */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  tag?: string;
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  min_duration_ms?: number;
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  max_duration_ms?: number;
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  min_cost?: number;
  /** Only traces with end-user feedback of this name (POST /traces/feedback) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  feedback_name?: string;
  /** Only traces with feedback equal to this value (`false`: a thumbs down; a number: that score; text: that category) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  feedback_value?: string;
  /** Only traces scored by the evaluator of this name (online evaluation: each metric's newest score) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  score_evaluator?: string;
  /** Only traces with a score of this metric */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  score_metric?: string;
  /** Only traces with a score that passed (`true`) or failed (`false`) */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent()
  @IsIn(['true', 'false'])
  score_passed?: 'true' | 'false';
  /** Only traces with a score of at most this */
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  score_max?: number;
  @ApiPropertyOptional({ enum: ENRICHMENT_SORTS, default: 'start_time' })
  @ValidateIfPresent()
  @IsIn(ENRICHMENT_SORTS)
  sort?: (typeof ENRICHMENT_SORTS)[number];
  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'asc' })
  @ValidateIfPresent()
  @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit: number = 100;
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset: number = 0;
}

export class TraceTagResponse {
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  trace_id: string;
  @ApiProperty({ example: 'escalated' })
  tag: string;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class TraceTagsQuery {
  /** Only the tags of this trace */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  trace_id?: string;
  /** Only this tag */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  tag?: string;
}

export class PutTraceTagsRequest {
  /** Traces of the version (at most 1000) */
  @ApiProperty({ example: [EXAMPLE_TRACE.trace, EXAMPLE_TRACE.otherTrace] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(200, { each: true })
  trace_ids: string[];

  /** Tags: 1..100 characters of letters, digits, `-`, `_`, `.`, `:` or `/` (at most 50) */
  @ApiProperty({ example: [] }) // Empty: Spectral reads the pattern without the `u` flag, and then no real tag matches `\p{L}`.
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  @Matches(/^[\p{L}\p{N}_.:/-]{1,100}$/u, {
    each: true,
    message: 'each tag must be 1..100 letters, digits or - _ . : /',
  })
  tags: string[];

  /** `add` (default) adds the tags to each trace; `replace` makes them each trace's only tags (an empty list clears them) */
  @ApiPropertyOptional({ enum: ['add', 'replace'], default: 'add', example: 'replace' })
  @ValidateIfPresent()
  @IsIn(['add', 'replace'])
  mode?: 'add' | 'replace';
}

export class DeleteTraceTagsQuery {
  /** Remove tags of this trace (all its tags, or only `tag`) */
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  trace_id?: string;
  /** Remove this tag (from `trace_id`, or from every trace of the version) */
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  tag?: string;
}
