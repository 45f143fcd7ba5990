import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { MAX_INT32 } from '../../../../libs/common/json-limits.js';
import { ANY_JSON as ANY, IsBoundedJson, NestedObject } from '../../../../libs/common/record-validators.js';
import { CONVENTIONS, DROP_REASONS } from '../../../../libs/traces/span.types.js';

const present = (_: object, value: unknown) => value !== undefined;
const OPEN = { type: 'object', additionalProperties: true } as const;

export const CONNECTION_KINDS = ['otlp_file_url', 'langfuse', 'phoenix'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];
export const CONVENTION_CHOICES = ['auto', ...CONVENTIONS] as const;
export type ConventionChoice = (typeof CONVENTION_CHOICES)[number];
export const INGEST_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
/** Records land:inline and conventions:detect take in one body. */
export const MAX_INLINE_RECORDS = 10_000;

export class WorkspaceQuery {
  @IsUUID()
  workspace_id: string;
}

export class CreateTraceConnectionRequest {
  @IsUUID()
  workspace_id: string;

  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  /** `otlp_file_url`: an OTLP/JSON, JSON Lines or OTLP/protobuf file at a URL; `langfuse`: a Langfuse-compatible public API; `phoenix`: a Phoenix-compatible REST API */
  @ApiProperty({ enum: CONNECTION_KINDS })
  @IsIn(CONNECTION_KINDS)
  kind: ConnectionKind;

  /** The file URL (otlp_file_url) or the API's base URL (langfuse, phoenix), http or https */
  @IsString() @MaxLength(2000) @Matches(/^https?:\/\/\S+$/, { message: 'url must be an http(s) URL' })
  url: string;

  /** Workspace secret holding the bearer token (otlp_file_url, phoenix) or the Langfuse secret key */
  @ValidateIf(present) @IsUUID()
  secret_id?: string;

  /** langfuse: workspace secret holding the public key (Basic auth is public key : secret key) */
  @ValidateIf(present) @IsUUID()
  public_key_secret_id?: string;

  /** phoenix: the project whose spans are read (default `default`) */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(200)
  project?: string;

  /** Records asked for per page from an API, 1..1000 (default 100) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(1000)
  page_size?: number;

  /** The trace dataset landings from this connection go to (unless a landing names another) */
  @ValidateIf(present) @IsUUID()
  dataset_id?: string;
}

export class TraceSourceConnectionResponse {
  id: string;
  workspace_id: string;
  name: string;
  @ApiProperty({ enum: CONNECTION_KINDS })
  kind: ConnectionKind;
  url: string;
  secret_id: string | null;
  public_key_secret_id: string | null;
  project: string | null;
  page_size: number;
  dataset_id: string | null;
  created_by: string | null;
  created_at: Date;
  last_landed_at: Date | null;
}

/** Where a landing writes and how it normalises. */
export class LandingOptions {
  /** An existing trace dataset to add a version to */
  @ValidateIf(present) @IsUUID()
  dataset_id?: string;

  /** Or a dataset by name: created (kind `traces`) when the workspace has none of this name */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(200)
  dataset_name?: string;

  /** The convention to read attributes with; `auto` (default) picks it per span */
  @ApiPropertyOptional({ enum: CONVENTION_CHOICES, default: 'auto' })
  @ValidateIf(present) @IsIn(CONVENTION_CHOICES)
  convention?: ConventionChoice;

  /** Keep attributes no canonical field takes under `attributes` (default true); false drops them */
  @ValidateIf(present) @IsBoolean()
  keep_unmapped?: boolean;

  /** The new version's message */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

export class LandTracesRequest extends LandingOptions {
  @IsUUID()
  workspace_id: string;

  /** Land this upload (POST /traces/uploads) ... */
  @ValidateIf(present) @IsUUID()
  upload_id?: string;

  /** ... or pull from this connection (exactly one of the two) */
  @ValidateIf(present) @IsUUID()
  connection_id?: string;

  /** connection: stop after this many records (default 100000) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(1_000_000)
  max_records?: number;
}

export class LandFromConnectionRequest extends LandingOptions {
  /** Stop after this many records (default 100000) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(1_000_000)
  max_records?: number;
}

export class LandInlineRequest extends LandingOptions {
  @IsUUID()
  workspace_id: string;

  /** OTLP/JSON ExportTraceServiceRequest objects and/or span records (OpenTelemetry, Phoenix, Langfuse or plain `trace_id`/`span_id` records), at most 10000 */
  @ApiProperty({ type: 'array', items: OPEN })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];
}

export class DetectConventionsRequest {
  @IsUUID()
  workspace_id: string;

  /** A sample: OTLP/JSON requests and/or span records, at most 10000 */
  @ApiProperty({ type: 'array', items: OPEN })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];

  /** Spans examined, 1..10000 (default 1000) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10_000)
  sample?: number;
}

export class DetectUploadRequest {
  /** Spans examined, 1..10000 (default 1000) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10_000)
  sample?: number;
}

export class UploadTracesForm {
  /** The trace file: OTLP/JSON, JSON Lines, a JSON array of span records, or OTLP/protobuf (.pb) */
  @ApiProperty({ type: 'string', format: 'binary' })
  file: unknown;
}

export class TraceUploadResponse {
  id: string;
  workspace_id: string;
  filename: string;
  /** What the file holds, from its first bytes: otlp_json, otlp_protobuf, jsonl or json */
  format: string;
  size_bytes: number;
  sha256: string;
  created_by: string | null;
  created_at: Date;
}

class FieldMappingDto {
  /** A canonical span field */
  field: string;
  /** Source attributes that filled it */
  source_attributes: string[];
  spans_mapped: number;
  /** Share of the sampled spans whose field was filled, 0..1 */
  coverage: number;
}

class UnmappedAttributeDto {
  key: string;
  /** Spans carrying it */
  spans: number;
  /** `kept` under `attributes` of the landed span, or `dropped` (over the size limit, or keep_unmapped false) */
  @ApiProperty({ enum: ['kept', 'dropped'] })
  fate: 'kept' | 'dropped';
  spans_dropped: number;
  examples: string[];
}

class DroppedRecordsDto {
  @ApiProperty({ enum: DROP_REASONS })
  reason: string;
  count: number;
  example_source_ref: string;
}

class ConventionCandidateDto {
  @ApiProperty({ enum: CONVENTIONS })
  convention: string;
  confidence: number;
  spans: number;
}

export class TraceConventionDetectionResponse {
  /** The convention most spans follow */
  @ApiProperty({ enum: CONVENTIONS })
  convention: string;
  /** 0..1 (see docs/traces.md) */
  confidence: number;
  @ApiProperty({ type: [ConventionCandidateDto] })
  candidates: ConventionCandidateDto[];
  /** Spans read from the sample */
  span_count: number;
  /** Spans examined */
  sampled: number;
  @ApiProperty({ type: [FieldMappingDto] })
  field_mappings: FieldMappingDto[];
  @ApiProperty({ type: [UnmappedAttributeDto] })
  unmapped_attributes: UnmappedAttributeDto[];
  @ApiProperty({ type: [DroppedRecordsDto] })
  dropped_records: DroppedRecordsDto[];
  warnings: string[];
  /** The upload examined, for :detect on an upload */
  upload_id?: string;
}

class IngestSourceDto {
  @ApiProperty({ enum: ['upload', 'inline', 'connection'] })
  kind: 'upload' | 'inline' | 'connection';
  upload_id: string | null;
  connection_id: string | null;
}

class IngestCountsDto {
  /** Spans and records read (received = landed + deduplicated + dropped) */
  received: number;
  /** New spans written to the version */
  landed: number;
  /** Spans already in the dataset (or twice in this source): not written again */
  deduplicated: number;
  /** Records that could not be normalised: see /drops */
  dropped: number;
}

export class TraceIngestRunResponse {
  id: string;
  workspace_id: string;
  @ApiProperty({ enum: INGEST_STATES })
  state: string;
  source: IngestSourceDto;
  /** The trace dataset written to (null until the landing resolved it) */
  dataset_id: string | null;
  /** The version the landing created (null while running, or when nothing new landed) */
  version_id: string | null;
  @ApiProperty({ enum: CONVENTION_CHOICES })
  convention: string;
  keep_unmapped: boolean;
  counts: IngestCountsDto;
  /** Drops by reason */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  drop_reasons: Record<string, number>;
  /** Normalised spans (landed or deduplicated) by the convention that mapped them */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  conventions: Record<string, number>;
  /** Traces in the version the landing wrote (0 when nothing new landed) */
  traces: number;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  error: Record<string, unknown> | null;
  job_id: string | null;
  created_by: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export class TraceDropRecordResponse {
  id: string;
  run_id: string;
  version_id: string | null;
  /** Order among the run's drops, from 1 */
  ordinal: number;
  @ApiProperty({ enum: DROP_REASONS })
  reason: string;
  detail: string;
  /** Where the record was in the source: `line 12`, `record 3, span 2` */
  source_ref: string;
  /** The original record */
  @ApiProperty({ ...ANY, nullable: true, description: 'the original record, as received' })
  payload: unknown;
  created_at: Date;
}

export class TraceIngestRunDropsResponse {
  run_id: string;
  /** Drops of the run (all pages) */
  total: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  by_reason: Record<string, number>;
  @ApiProperty({ type: [TraceDropRecordResponse] })
  items: TraceDropRecordResponse[];
  limit: number;
  offset: number;
}

export class DropsQuery {
  /** Only drops of this reason */
  @ApiPropertyOptional({ enum: DROP_REASONS })
  @ValidateIf(present) @IsIn(DROP_REASONS)
  reason?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit: number = 100;

  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
  offset: number = 0;
}

export class GroundTruthItem {
  /** A trace of the version */
  @IsString() @MinLength(1) @MaxLength(200)
  trace_id: string;

  /** What the trace should have produced: text or any JSON */
  @ApiProperty({ ...ANY, description: 'text or any JSON value' })
  @ValidateIf(() => true) @IsBoundedJson(64_000)
  expected_output: unknown;

  @ValidateIf(present) @IsString() @MaxLength(4000)
  notes?: string;

  /** Labels of the expectation (e.g. `resolved`, `escalate`) */
  @ValidateIf(present) @IsObject() @IsBoundedJson(8_000)
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  labels?: Record<string, unknown>;
}

export class CreateGroundTruthRequest {
  /** Expected outputs, one per trace (at most 10000); a new ground-truth version replaces the whole set */
  @ApiProperty({ type: [GroundTruthItem] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10_000) @NestedObject(() => GroundTruthItem, { each: true })
  items: GroundTruthItem[];

  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

export class TraceGroundTruthVersionResponse {
  id: string;
  dataset_id: string;
  version_id: string;
  /** 1, 2, 3, ... per trace version */
  number: number;
  item_count: number;
  message: string;
  created_by: string | null;
  created_at: Date;
}

export class TraceGroundTruthResponse extends TraceGroundTruthVersionResponse {
  @ApiProperty({ type: [GroundTruthItem] })
  items: GroundTruthItem[];
  /** Every ground-truth version of this trace version, newest first */
  @ApiProperty({ type: [Number] })
  versions: number[];
}

export class GroundTruthQuery {
  /** A ground-truth version number (default: the newest) */
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(1) @Max(MAX_INT32)
  number?: number;
}

export class TraceCurrentVersionResponse {
  dataset_id: string;
  /** The dataset's current version now */
  version_id: string;
  number: number;
  state: string;
  /** The version that was current before (null if none) */
  previous_version_id: string | null;
  promoted_at: Date;
}

class LatencyStatsDto {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

class TopologyNodeDto {
  id: string;
  kind: string;
  name: string;
  calls: number;
  errors: number;
  error_rate: number;
  /** Distinct service.name values of the component's spans */
  service_names: string[];
  latency_ms: LatencyStatsDto;
}

class TopologyEdgeDto {
  source: string;
  target: string;
  calls: number;
  errors: number;
  error_rate: number;
  latency_ms: LatencyStatsDto;
}

export class TopologyGraph {
  dataset_id: string;
  version_id: string;
  trace_count: number;
  span_count: number;
  @ApiProperty({ type: [TopologyNodeDto] })
  nodes: TopologyNodeDto[];
  @ApiProperty({ type: [TopologyEdgeDto] })
  edges: TopologyEdgeDto[];
  @ApiProperty({ type: 'array', items: OPEN })
  roots: Array<Record<string, unknown>>;
  /** Spans whose parent is not in the version (treated as roots) */
  orphan_spans: number;
}

export class TopologyQuery {
  /** Only traces with this tag */
  @ValidateIf(present) @IsString() @MaxLength(100)
  tag?: string;
}

class EnrichmentFieldDto {
  name: string;
  type: string;
  description: string;
}

export class TraceEnrichmentStatusResponse {
  dataset_id: string;
  version_id: string;
  /** `not_started` until a landing or a recompute queued one */
  @ApiProperty({ enum: ['not_started', ...INGEST_STATES] })
  state: string;
  run_id: string | null;
  traces_total: number;
  traces_done: number;
  /** traces_done / traces_total, 0..1 */
  progress: number;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  prices: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  error: Record<string, unknown> | null;
  started_at: Date | null;
  finished_at: Date | null;
  @ApiProperty({ type: [EnrichmentFieldDto] })
  fields: EnrichmentFieldDto[];
}

export class RecomputeEnrichmentRequest {
  /** Model -> USD per 1M input and output tokens, over the built-in table (matched by model prefix) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'object', required: ['input_per_1m', 'output_per_1m'], properties: { input_per_1m: { type: 'number', minimum: 0 }, output_per_1m: { type: 'number', minimum: 0 } } },
    example: { 'my-finetune': { input_per_1m: 0.3, output_per_1m: 1.2 } },
  })
  @ValidateIf(present) @IsObject() @IsBoundedJson(32_000)
  prices?: Record<string, { input_per_1m: number; output_per_1m: number }>;
}

export const ENRICHMENT_SORTS = ['duration_ms', 'cost', 'tokens_total', 'error_count', 'span_count', 'start_time', 'trace_id'] as const;

export class EnrichmentResultsQuery {
  @ValidateIf(present) @IsString() @MaxLength(200)
  trace_id?: string;
  @ValidateIf(present) @IsString() @MaxLength(200)
  session_id?: string;
  /** true: only traces with an error span; false: only those without */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIf(present) @IsIn(['true', 'false'])
  has_error?: 'true' | 'false';
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIf(present) @IsIn(['true', 'false'])
  loop_detected?: 'true' | 'false';
  /** A model any LLM span of the trace used */
  @ValidateIf(present) @IsString() @MaxLength(200)
  model?: string;
  /** Only traces with this tag */
  @ValidateIf(present) @IsString() @MaxLength(100)
  tag?: string;
  @ValidateIf(present) @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  min_duration_ms?: number;
  @ValidateIf(present) @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  max_duration_ms?: number;
  @ValidateIf(present) @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  min_cost?: number;
  @ApiPropertyOptional({ enum: ENRICHMENT_SORTS, default: 'start_time' })
  @ValidateIf(present) @IsIn(ENRICHMENT_SORTS)
  sort?: (typeof ENRICHMENT_SORTS)[number];
  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'asc' })
  @ValidateIf(present) @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit: number = 100;
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIf(present) @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
  offset: number = 0;
}

export class TraceTagResponse {
  trace_id: string;
  tag: string;
  created_by: string | null;
  created_at: Date;
}

export class TraceTagsQuery {
  /** Only the tags of this trace */
  @ValidateIf(present) @IsString() @MaxLength(200)
  trace_id?: string;
  /** Only this tag */
  @ValidateIf(present) @IsString() @MaxLength(100)
  tag?: string;
}

export class PutTraceTagsRequest {
  /** Traces of the version (at most 1000) */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(1000) @IsString({ each: true }) @MinLength(1, { each: true }) @MaxLength(200, { each: true })
  trace_ids: string[];

  /** Tags: 1..100 characters of letters, digits, `-`, `_`, `.`, `:` or `/` (at most 50) */
  @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @Matches(/^[\p{L}\p{N}_.:/-]{1,100}$/u, { each: true, message: 'each tag must be 1..100 letters, digits or - _ . : /' })
  tags: string[];

  /** `add` (default) adds the tags to each trace; `replace` makes them each trace's only tags (an empty list clears them) */
  @ApiPropertyOptional({ enum: ['add', 'replace'], default: 'add' })
  @ValidateIf(present) @IsIn(['add', 'replace'])
  mode?: 'add' | 'replace';
}

export class DeleteTraceTagsQuery {
  /** Remove tags of this trace (all its tags, or only `tag`) */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(200)
  trace_id?: string;
  /** Remove this tag (from `trace_id`, or from every trace of the version) */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(100)
  tag?: string;
}

