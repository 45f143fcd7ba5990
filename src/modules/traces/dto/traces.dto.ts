import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { MAX_INT32 } from '../../../../libs/common/json-limits.js';
import { ANY_JSON as ANY, IsBoundedJson, NestedObject } from '../../../../libs/common/record-validators.js';
import { CONVENTIONS, DROP_REASONS } from '../../../../libs/traces/span.types.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME, EXAMPLE_TRACE } from '../../../../libs/common/openapi-examples.js';
import { ValidateIfPresent } from '../../../../libs/common/dto-decorators.js';
import { JOB_STATE_VOCABULARY } from '../../../../libs/queue/tracked-job.js';

/** An OTLP/JSON ExportTraceServiceRequest of the examples: one LLM span of support-bot. */
export const EXAMPLE_OTLP_REQUEST = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] }, scopeSpans: [{ spans: [{ traceId: EXAMPLE_TRACE.trace, spanId: EXAMPLE_TRACE.span, name: 'ChatCompletion', kind: 3, startTimeUnixNano: '1747145160000000000', endTimeUnixNano: '1747145161040000000', attributes: [{ key: 'openinference.span.kind', value: { stringValue: 'LLM' } }, { key: 'llm.model_name', value: { stringValue: 'gpt-4o-mini' } }] }] }] }] };

const OPEN = { type: 'object', additionalProperties: true } as const;

export const CONNECTION_KINDS = ['otlp_file_url', 'langfuse', 'phoenix'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];
export const CONVENTION_CHOICES = ['auto', ...CONVENTIONS] as const;
export type ConventionChoice = (typeof CONVENTION_CHOICES)[number];
/** The documented states of landings and enrichments: the job states as they are. */
export const INGEST_STATES = JOB_STATE_VOCABULARY.states;
/** Records land:inline and conventions:detect take in one body. */
export const MAX_INLINE_RECORDS = 10_000;

export class WorkspaceQuery {
  @IsUUID()
  workspace_id: string;
}

@ApiSchemaExample({ workspace_id: EXAMPLE_ID.workspace, name: 'langfuse-production', kind: 'langfuse', url: 'https://cloud.langfuse.com', secret_id: EXAMPLE_ID.secret, public_key_secret_id: EXAMPLE_ID.otherSecret, page_size: 100, dataset_id: EXAMPLE_ID.traceDataset })
export class CreateTraceConnectionRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  @ApiProperty({ example: 'langfuse-production' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  /** `otlp_file_url`: an OTLP/JSON, JSON Lines or OTLP/protobuf file at a URL; `langfuse`: a Langfuse-compatible public API; `phoenix`: a Phoenix-compatible REST API */
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'langfuse' })
  @IsIn(CONNECTION_KINDS)
  kind: ConnectionKind;

  /** The file URL (otlp_file_url) or the API's base URL (langfuse, phoenix), http or https */
  @ApiProperty({ example: 'https://cloud.langfuse.com' })
  @IsString() @MaxLength(2000) @Matches(/^https?:\/\/\S+$/, { message: 'url must be an http(s) URL' })
  url: string;

  /** Workspace secret holding the bearer token (otlp_file_url, phoenix) or the Langfuse secret key */
  @ApiPropertyOptional({ example: EXAMPLE_ID.secret })
  @ValidateIfPresent() @IsUUID()
  secret_id?: string;

  /** langfuse: workspace secret holding the public key (Basic auth is public key : secret key) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.otherSecret })
  @ValidateIfPresent() @IsUUID()
  public_key_secret_id?: string;

  /** phoenix: the project whose spans are read (default `default`) */
  @ApiPropertyOptional({ example: 'default' })
  @ValidateIfPresent() @IsString() @MinLength(1) @MaxLength(200)
  project?: string;

  /** Records asked for per page from an API, 1..1000 (default 100) */
  @ApiPropertyOptional({ example: 100 })
  @ValidateIfPresent() @IsInt() @Min(1) @Max(1000)
  page_size?: number;

  /** The trace dataset landings from this connection go to (unless a landing names another) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceDataset })
  @ValidateIfPresent() @IsUUID()
  dataset_id?: string;
}

export class TraceSourceConnectionResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceConnection })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'langfuse-production' })
  name: string;
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'langfuse' })
  kind: ConnectionKind;
  @ApiProperty({ example: 'https://cloud.langfuse.com' })
  url: string;
  @ApiProperty({ example: EXAMPLE_ID.secret })
  secret_id: string | null;
  @ApiProperty({ example: EXAMPLE_ID.otherSecret })
  public_key_secret_id: string | null;
  @ApiProperty({ example: null })
  project: string | null;
  @ApiProperty({ example: 100 })
  page_size: number;
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string | null;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  last_landed_at: Date | null;
}

/** Where a landing writes and how it normalises. */
export class LandingOptions {
  /** An existing trace dataset to add a version to */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceDataset })
  @ValidateIfPresent() @IsUUID()
  dataset_id?: string;

  /** Or a dataset by name: created (kind `traces`) when the workspace has none of this name */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.traceDataset })
  @ValidateIfPresent() @IsString() @MinLength(1) @MaxLength(200)
  dataset_name?: string;

  /** The convention to read attributes with; `auto` (default) picks it per span */
  @ApiPropertyOptional({ enum: CONVENTION_CHOICES, default: 'auto', example: 'auto' })
  @ValidateIfPresent() @IsIn(CONVENTION_CHOICES)
  convention?: ConventionChoice;

  /** Keep attributes no canonical field takes under `attributes` (default true); false drops them */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent() @IsBoolean()
  keep_unmapped?: boolean;

  /** The new version's message */
  @ApiPropertyOptional({ example: 'Production traces of 13 May' })
  @ValidateIfPresent() @IsString() @MaxLength(2000)
  message?: string;
}

@ApiSchemaExample({ workspace_id: EXAMPLE_ID.workspace, upload_id: EXAMPLE_ID.traceUpload, dataset_id: EXAMPLE_ID.traceDataset, convention: 'auto', keep_unmapped: true, message: 'Production traces of 13 May' })
export class LandTracesRequest extends LandingOptions {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Land this upload (POST /traces/uploads) ... */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceUpload })
  @ValidateIfPresent() @IsUUID()
  upload_id?: string;

  /** ... or pull from this connection (exactly one of the two) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceConnection })
  @ValidateIfPresent() @IsUUID()
  connection_id?: string;

  /** connection: stop after this many records (default 100000) */
  @ApiPropertyOptional({ example: 100000 })
  @ValidateIfPresent() @IsInt() @Min(1) @Max(1_000_000)
  max_records?: number;
}

@ApiSchemaExample({ dataset_id: EXAMPLE_ID.traceDataset, convention: 'langfuse', max_records: 20000, message: 'Langfuse traces of 13 May' })
export class LandFromConnectionRequest extends LandingOptions {
  /** Stop after this many records (default 100000) */
  @ApiPropertyOptional({ example: 20000 })
  @ValidateIfPresent() @IsInt() @Min(1) @Max(1_000_000)
  max_records?: number;
}

@ApiSchemaExample({ workspace_id: EXAMPLE_ID.workspace, dataset_name: EXAMPLE_NAME.traceDataset, convention: 'auto', records: [EXAMPLE_OTLP_REQUEST] })
export class LandInlineRequest extends LandingOptions {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** OTLP/JSON ExportTraceServiceRequest objects and/or span records (OpenTelemetry, Phoenix, Langfuse or plain `trace_id`/`span_id` records), at most 10000 */
  @ApiProperty({ type: 'array', items: OPEN, example: [EXAMPLE_OTLP_REQUEST] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];
}

export class DetectConventionsRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** A sample: OTLP/JSON requests and/or span records, at most 10000 */
  @ApiProperty({ type: 'array', items: OPEN, example: [EXAMPLE_OTLP_REQUEST] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];

  /** Spans examined, 1..10000 (default 1000) */
  @ApiPropertyOptional({ example: 1000 })
  @ValidateIfPresent() @IsInt() @Min(1) @Max(10_000)
  sample?: number;
}

export class DetectUploadRequest {
  /** Spans examined, 1..10000 (default 1000) */
  @ApiPropertyOptional({ example: 1000 })
  @ValidateIfPresent() @IsInt() @Min(1) @Max(10_000)
  sample?: number;
}

export class UploadTracesForm {
  /** The trace file: OTLP/JSON, JSON Lines, a JSON array of span records, or OTLP/protobuf (.pb) */
  @ApiProperty({ type: 'string', format: 'binary' })
  file: unknown;
}

export class TraceUploadResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceUpload })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'traces-2025-05-13.jsonl' })
  filename: string;
  /** What the file holds, from its first bytes: otlp_json, otlp_protobuf, jsonl or json */
  @ApiProperty({ example: 'jsonl' })
  format: string;
  @ApiProperty({ example: 1843221 })
  size_bytes: number;
  @ApiProperty({ example: 'b7e2c1d0f4a3958e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6' })
  sha256: string;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

class FieldMappingDto {
  /** A canonical span field */
  @ApiProperty({ example: 'model' })
  field: string;
  /** Source attributes that filled it */
  @ApiProperty({ example: ['llm.model_name', 'gen_ai.request.model'] })
  source_attributes: string[];
  @ApiProperty({ example: 812 })
  spans_mapped: number;
  /** Share of the sampled spans whose field was filled, 0..1 */
  @ApiProperty({ example: 0.97 })
  coverage: number;
}

class UnmappedAttributeDto {
  @ApiProperty({ example: 'app.tenant_id' })
  key: string;
  /** Spans carrying it */
  @ApiProperty({ example: 1204 })
  spans: number;
  /** `kept` under `attributes` of the landed span, or `dropped` (over the size limit, or keep_unmapped false) */
  @ApiProperty({ enum: ['kept', 'dropped'], example: 'kept' })
  fate: 'kept' | 'dropped';
  @ApiProperty({ example: 0 })
  spans_dropped: number;
  @ApiProperty({ example: ['acme-eu', 'acme-us'] })
  examples: string[];
}

class DroppedRecordsDto {
  @ApiProperty({ enum: DROP_REASONS, example: 'missing_span_id' })
  reason: string;
  @ApiProperty({ example: 3 })
  count: number;
  @ApiProperty({ example: 'line 12' })
  example_source_ref: string;
}

class ConventionCandidateDto {
  @ApiProperty({ enum: CONVENTIONS, example: 'openinference' })
  convention: string;
  @ApiProperty({ example: 0.92 })
  confidence: number;
  @ApiProperty({ example: 1204 })
  spans: number;
}

export class TraceConventionDetectionResponse {
  /** The convention most spans follow */
  @ApiProperty({ enum: CONVENTIONS, example: 'openinference' })
  convention: string;
  /** 0..1 (see docs/traces.md) */
  @ApiProperty({ example: 0.92 })
  confidence: number;
  @ApiProperty({ type: [ConventionCandidateDto] })
  candidates: ConventionCandidateDto[];
  /** Spans read from the sample */
  @ApiProperty({ example: 1204 })
  span_count: number;
  /** Spans examined */
  @ApiProperty({ example: 1000 })
  sampled: number;
  @ApiProperty({ type: [FieldMappingDto] })
  field_mappings: FieldMappingDto[];
  @ApiProperty({ type: [UnmappedAttributeDto] })
  unmapped_attributes: UnmappedAttributeDto[];
  @ApiProperty({ type: [DroppedRecordsDto] })
  dropped_records: DroppedRecordsDto[];
  @ApiProperty({ example: ['3 records had no span id and were left out'] })
  warnings: string[];
  /** The upload examined, for :detect on an upload */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceUpload })
  upload_id?: string;
}

class IngestSourceDto {
  /** `otlp`: the dataset's live stream of spans exported to POST /v1/traces (one run per dataset, running while it receives) */
  @ApiProperty({ enum: ['upload', 'inline', 'connection', 'otlp'], example: 'upload' })
  kind: 'upload' | 'inline' | 'connection' | 'otlp';
  @ApiProperty({ example: EXAMPLE_ID.traceUpload })
  upload_id: string | null;
  @ApiProperty({ example: null })
  connection_id: string | null;
}

class IngestCountsDto {
  /** Spans and records read (received = landed + deduplicated + dropped + pending) */
  @ApiProperty({ example: 1207 })
  received: number;
  /** New spans written to the version */
  @ApiProperty({ example: 1180 })
  landed: number;
  /** Spans already in the dataset (or twice in this source): not written again */
  @ApiProperty({ example: 24 })
  deduplicated: number;
  /** Records that could not be normalised: see /drops */
  @ApiProperty({ example: 3 })
  dropped: number;
  /** Spans acknowledged and not landed yet: only a live stream (`source.kind: otlp`) has any */
  @ApiProperty({ example: 0 })
  pending: number;
}

export class TraceIngestRunResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceIngestRun })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ enum: INGEST_STATES, example: 'succeeded' })
  state: string;
  source: IngestSourceDto;
  /** The trace dataset written to (null until the landing resolved it) */
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string | null;
  /** The version the landing created (null while running, or when nothing new landed) */
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string | null;
  @ApiProperty({ enum: CONVENTION_CHOICES, example: 'auto' })
  convention: string;
  @ApiProperty({ example: true })
  keep_unmapped: boolean;
  counts: IngestCountsDto;
  /** Drops by reason */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { missing_span_id: 3 } })
  drop_reasons: Record<string, number>;
  /** Normalised spans (landed or deduplicated) by the convention that mapped them */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { openinference: 1180, plain_otel: 24 } })
  conventions: Record<string, number>;
  /** Traces in the version the landing wrote (0 when nothing new landed) */
  @ApiProperty({ example: 96 })
  traces: number;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, example: null })
  error: Record<string, unknown> | null;
  @ApiProperty({ example: EXAMPLE_ID.job })
  job_id: string | null;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.started })
  started_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  finished_at: Date | null;
}

export class TraceDropRecordResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceDrop })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceIngestRun })
  run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string | null;
  /** Order among the run's drops, from 1 */
  @ApiProperty({ example: 1 })
  ordinal: number;
  @ApiProperty({ enum: DROP_REASONS, example: 'missing_span_id' })
  reason: string;
  @ApiProperty({ example: 'The record has a trace id but no span id' })
  detail: string;
  /** Where the record was in the source: `line 12`, `record 3, span 2` */
  @ApiProperty({ example: 'line 12' })
  source_ref: string;
  /** The original record */
  @ApiProperty({ ...ANY, nullable: true, description: 'the original record, as received', example: { trace_id: EXAMPLE_TRACE.trace, name: 'retrieve' } })
  payload: unknown;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class TraceIngestRunDropsResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceIngestRun })
  run_id: string;
  /** Drops of the run (all pages) */
  @ApiProperty({ example: 3 })
  total: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { missing_span_id: 3 } })
  by_reason: Record<string, number>;
  @ApiProperty({ type: [TraceDropRecordResponse] })
  items: TraceDropRecordResponse[];
  @ApiProperty({ example: 100 })
  limit: number;
  @ApiProperty({ example: 0 })
  offset: number;
}

export class DropsQuery {
  /** Only drops of this reason */
  @ApiPropertyOptional({ enum: DROP_REASONS })
  @ValidateIfPresent() @IsIn(DROP_REASONS)
  reason?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @ValidateIfPresent() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit: number = 100;

  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIfPresent() @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
  offset: number = 0;
}

export class GroundTruthItem {
  /** A trace of the version */
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  @IsString() @MinLength(1) @MaxLength(200)
  trace_id: string;

  /** What the trace should have produced: text or any JSON */
  @ApiProperty({ ...ANY, description: 'text or any JSON value', example: 'Your refund was issued on 12 May and reaches your card within 5 business days.' })
  @ValidateIf(() => true) @IsBoundedJson(64_000)
  expected_output: unknown;

  @ApiPropertyOptional({ example: 'Checked against the billing system' })
  @ValidateIfPresent() @IsString() @MaxLength(4000)
  notes?: string;

  /** Labels of the expectation (e.g. `resolved`, `escalate`) */
  @ValidateIfPresent() @IsObject() @IsBoundedJson(8_000)
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { outcome: 'resolved' } })
  labels?: Record<string, unknown>;
}

export class CreateGroundTruthRequest {
  /** Expected outputs, one per trace (at most 10000); a new ground-truth version replaces the whole set */
  @ApiProperty({ type: [GroundTruthItem] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10_000) @NestedObject(() => GroundTruthItem, { each: true })
  items: GroundTruthItem[];

  @ApiPropertyOptional({ example: 'Refund conversations reviewed by the billing team' })
  @ValidateIfPresent() @IsString() @MaxLength(2000)
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
  @ValidateIfPresent() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_INT32)
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
  @ValidateIfPresent() @IsString() @MaxLength(100)
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
    additionalProperties: { type: 'object', required: ['input_per_1m', 'output_per_1m'], properties: { input_per_1m: { type: 'number', minimum: 0 }, output_per_1m: { type: 'number', minimum: 0 } } },
    example: { 'my-finetune': { input_per_1m: 0.3, output_per_1m: 1.2 } },
  })
  @ValidateIfPresent() @IsObject() @IsBoundedJson(32_000)
  prices?: Record<string, { input_per_1m: number; output_per_1m: number }>;
}

export const ENRICHMENT_SORTS = ['duration_ms', 'cost', 'tokens_total', 'error_count', 'span_count', 'start_time', 'trace_id'] as const;

export class EnrichmentResultsQuery {
  @ValidateIfPresent() @IsString() @MaxLength(200)
  trace_id?: string;
  @ValidateIfPresent() @IsString() @MaxLength(200)
  session_id?: string;
  /** true: only traces with an error span; false: only those without */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent() @IsIn(['true', 'false'])
  has_error?: 'true' | 'false';
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @ValidateIfPresent() @IsIn(['true', 'false'])
  loop_detected?: 'true' | 'false';
  /** A model any LLM span of the trace used */
  @ValidateIfPresent() @IsString() @MaxLength(200)
  model?: string;
  /** Only traces with this tag */
  @ValidateIfPresent() @IsString() @MaxLength(100)
  tag?: string;
  @ValidateIfPresent() @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  min_duration_ms?: number;
  @ValidateIfPresent() @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  max_duration_ms?: number;
  @ValidateIfPresent() @Type(() => Number) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  min_cost?: number;
  @ApiPropertyOptional({ enum: ENRICHMENT_SORTS, default: 'start_time' })
  @ValidateIfPresent() @IsIn(ENRICHMENT_SORTS)
  sort?: (typeof ENRICHMENT_SORTS)[number];
  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'asc' })
  @ValidateIfPresent() @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @ValidateIfPresent() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit: number = 100;
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIfPresent() @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
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
  @ValidateIfPresent() @IsString() @MaxLength(200)
  trace_id?: string;
  /** Only this tag */
  @ValidateIfPresent() @IsString() @MaxLength(100)
  tag?: string;
}

export class PutTraceTagsRequest {
  /** Traces of the version (at most 1000) */
  @ApiProperty({ example: [EXAMPLE_TRACE.trace, EXAMPLE_TRACE.otherTrace] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(1000) @IsString({ each: true }) @MinLength(1, { each: true }) @MaxLength(200, { each: true })
  trace_ids: string[];

  /** Tags: 1..100 characters of letters, digits, `-`, `_`, `.`, `:` or `/` (at most 50) */
  @ApiProperty({ example: [] }) // Empty: Spectral reads the pattern without the `u` flag, and then no real tag matches `\p{L}`.
  @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @Matches(/^[\p{L}\p{N}_.:/-]{1,100}$/u, { each: true, message: 'each tag must be 1..100 letters, digits or - _ . : /' })
  tags: string[];

  /** `add` (default) adds the tags to each trace; `replace` makes them each trace's only tags (an empty list clears them) */
  @ApiPropertyOptional({ enum: ['add', 'replace'], default: 'add', example: 'replace' })
  @ValidateIfPresent() @IsIn(['add', 'replace'])
  mode?: 'add' | 'replace';
}

export class DeleteTraceTagsQuery {
  /** Remove tags of this trace (all its tags, or only `tag`) */
  @ValidateIfPresent() @IsString() @MinLength(1) @MaxLength(200)
  trace_id?: string;
  /** Remove this tag (from `trace_id`, or from every trace of the version) */
  @ValidateIfPresent() @IsString() @MinLength(1) @MaxLength(100)
  tag?: string;
}

