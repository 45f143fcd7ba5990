import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { ANY_JSON as ANY } from '#libs/common/record-validators.js';
import { CONVENTIONS, DROP_REASONS } from '#libs/traces/span.types.js';
import {
  ApiSchemaExample,
  EXAMPLE_AT,
  EXAMPLE_ID,
  EXAMPLE_NAME,
  EXAMPLE_TRACE,
} from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { JOB_STATE_VOCABULARY } from '#libs/queue/tracked-job.js';

/** An OTLP/JSON ExportTraceServiceRequest of the examples: one LLM span of support-bot. */
export const EXAMPLE_OTLP_REQUEST = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: EXAMPLE_TRACE.trace,
              spanId: EXAMPLE_TRACE.span,
              name: 'ChatCompletion',
              kind: 3,
              startTimeUnixNano: '1747145160000000000',
              endTimeUnixNano: '1747145161040000000',
              attributes: [
                { key: 'openinference.span.kind', value: { stringValue: 'LLM' } },
                { key: 'llm.model_name', value: { stringValue: 'gpt-4o-mini' } },
              ],
            },
          ],
        },
      ],
    },
  ],
};

/** An OTLP/JSON ExportLogsServiceRequest of the examples: the user message of that span, as a GenAI event record. */
export const EXAMPLE_OTLP_LOGS_REQUEST = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] },
      scopeLogs: [
        {
          scope: { name: '@opentelemetry/instrumentation-openai' },
          logRecords: [
            {
              timeUnixNano: '1747145160000000000',
              severityNumber: 9,
              traceId: EXAMPLE_TRACE.trace,
              spanId: EXAMPLE_TRACE.span,
              eventName: 'gen_ai.user.message',
              body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'Where is my order?' } }] } },
              attributes: [{ key: 'gen_ai.system', value: { stringValue: 'openai' } }],
            },
          ],
        },
      ],
    },
  ],
};

export const OPEN = { type: 'object', additionalProperties: true } as const;

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

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: 'langfuse-production',
  kind: 'langfuse',
  url: 'https://cloud.langfuse.com',
  secret_id: EXAMPLE_ID.secret,
  public_key_secret_id: EXAMPLE_ID.otherSecret,
  page_size: 100,
  dataset_id: EXAMPLE_ID.traceDataset,
})
export class CreateTraceConnectionRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  @ApiProperty({ example: 'langfuse-production' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  /** `otlp_file_url`: an OTLP/JSON, JSON Lines or OTLP/protobuf file at a URL; `langfuse`: a Langfuse-compatible public API; `phoenix`: a Phoenix-compatible REST API */
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'langfuse' })
  @IsIn(CONNECTION_KINDS)
  kind: ConnectionKind;

  /** The file URL (otlp_file_url) or the API's base URL (langfuse, phoenix), http or https */
  @ApiProperty({ example: 'https://cloud.langfuse.com' })
  @IsString()
  @MaxLength(2000)
  @Matches(/^https?:\/\/\S+$/, { message: 'url must be an http(s) URL' })
  url: string;

  /** Workspace secret holding the bearer token (otlp_file_url, phoenix) or the Langfuse secret key */
  @ApiPropertyOptional({ example: EXAMPLE_ID.secret })
  @ValidateIfPresent()
  @IsUUID()
  secret_id?: string;

  /** langfuse: workspace secret holding the public key (Basic auth is public key : secret key) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.otherSecret })
  @ValidateIfPresent()
  @IsUUID()
  public_key_secret_id?: string;

  /** phoenix: the project whose spans are read (default `default`) */
  @ApiPropertyOptional({ example: 'default' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  project?: string;

  /** Records asked for per page from an API, 1..1000 (default 100) */
  @ApiPropertyOptional({ example: 100 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1000)
  page_size?: number;

  /** The trace dataset landings from this connection go to (unless a landing names another) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceDataset })
  @ValidateIfPresent()
  @IsUUID()
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
  @ValidateIfPresent()
  @IsUUID()
  dataset_id?: string;

  /** Or a dataset by name: created (kind `traces`) when the workspace has none of this name */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.traceDataset })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  dataset_name?: string;

  /** The convention to read attributes with; `auto` (default) picks it per span */
  @ApiPropertyOptional({ enum: CONVENTION_CHOICES, default: 'auto', example: 'auto' })
  @ValidateIfPresent()
  @IsIn(CONVENTION_CHOICES)
  convention?: ConventionChoice;

  /** Keep attributes no canonical field takes under `attributes` (default true); false drops them */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  keep_unmapped?: boolean;

  /** The new version's message */
  @ApiPropertyOptional({ example: 'Production traces of 13 May' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  upload_id: EXAMPLE_ID.traceUpload,
  dataset_id: EXAMPLE_ID.traceDataset,
  convention: 'auto',
  keep_unmapped: true,
  message: 'Production traces of 13 May',
})
export class LandTracesRequest extends LandingOptions {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Land this upload (POST /traces/uploads) ... */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceUpload })
  @ValidateIfPresent()
  @IsUUID()
  upload_id?: string;

  /** ... or pull from this connection (exactly one of the two) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.traceConnection })
  @ValidateIfPresent()
  @IsUUID()
  connection_id?: string;

  /** connection: stop after this many records (default 100000) */
  @ApiPropertyOptional({ example: 100000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  max_records?: number;
}

@ApiSchemaExample({
  dataset_id: EXAMPLE_ID.traceDataset,
  convention: 'langfuse',
  max_records: 20000,
  message: 'Langfuse traces of 13 May',
})
export class LandFromConnectionRequest extends LandingOptions {
  /** Stop after this many records (default 100000) */
  @ApiPropertyOptional({ example: 20000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  max_records?: number;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  dataset_name: EXAMPLE_NAME.traceDataset,
  convention: 'auto',
  records: [EXAMPLE_OTLP_REQUEST],
})
export class LandInlineRequest extends LandingOptions {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** OTLP/JSON ExportTraceServiceRequest objects and/or span records (OpenTelemetry, Phoenix, Langfuse or plain `trace_id`/`span_id` records), at most 10000 */
  @ApiProperty({ maxItems: MAX_INLINE_RECORDS, type: 'array', items: OPEN, example: [EXAMPLE_OTLP_REQUEST] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];
}

export class DetectConventionsRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** A sample: OTLP/JSON requests and/or span records, at most 10000 */
  @ApiProperty({ maxItems: MAX_INLINE_RECORDS, type: 'array', items: OPEN, example: [EXAMPLE_OTLP_REQUEST] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_INLINE_RECORDS)
  records: unknown[];

  /** Spans examined, 1..10000 (default 1000) */
  @ApiPropertyOptional({ example: 1000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10_000)
  sample?: number;
}

export class DetectUploadRequest {
  /** Spans examined, 1..10000 (default 1000) */
  @ApiPropertyOptional({ example: 1000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10_000)
  sample?: number;
}

export class UploadTracesForm {
  /** The trace file: OTLP/JSON, JSON Lines, a JSON array of span records, or OTLP/protobuf (.pb); at most `UPLOAD_MAX_BYTES` (default 1 GiB, the bound stated), larger is 413 */
  @ApiProperty({ type: 'string', format: 'binary', maxLength: 1024 ** 3 })
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
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { openinference: 1180, plain_otel: 24 },
  })
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
  @ApiProperty({
    ...ANY,
    nullable: true,
    description: 'the original record, as received',
    example: { trace_id: EXAMPLE_TRACE.trace, name: 'retrieve' },
  })
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
  @ValidateIfPresent()
  @IsIn(DROP_REASONS)
  reason?: string;

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
