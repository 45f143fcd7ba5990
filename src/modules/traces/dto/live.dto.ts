import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

/** Optional, but not null: a member sent is validated. */
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

/** A head version's window bounds (seconds) and size bounds (spans). */
export const LIVE_WINDOW_SECONDS = { min: 10, max: 30 * 24 * 3600, default: 3600 } as const;
export const LIVE_MAX_SPANS = { min: 1, max: 10_000_000, default: 100_000 } as const;

@ApiSchemaExample({ window_seconds: 900, max_spans: 50_000 })
export class PutTraceLiveSettingsRequest {
  /** Seconds a head version takes spans before it is sealed and the next one opens (10 s .. 30 days; default 3600) */
  @ApiPropertyOptional({ minimum: LIVE_WINDOW_SECONDS.min, maximum: LIVE_WINDOW_SECONDS.max, example: 900 })
  @ValidateIfPresent()
  @IsInt()
  @Min(LIVE_WINDOW_SECONDS.min)
  @Max(LIVE_WINDOW_SECONDS.max)
  window_seconds?: number;

  /** Spans a head version takes before it is sealed (1 .. 10,000,000; default 100,000) */
  @ApiPropertyOptional({ minimum: LIVE_MAX_SPANS.min, maximum: LIVE_MAX_SPANS.max, example: 50_000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(LIVE_MAX_SPANS.min)
  @Max(LIVE_MAX_SPANS.max)
  max_spans?: number;
}

/** A trace dataset's live stream: spans exported to POST /v1/traces, and the head version they land in. */
export class TraceLiveStreamResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The stream's ingest run (GET /traces/runs/{run_id}: counts, drops); null until the first span or setting */
  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_ID.traceIngestRun })
  ingest_run_id: string | null;
  /** The open head version spans land in (a candidate that grows); null between a seal and the next span */
  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_ID.traceVersion })
  head_version_id: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 7 })
  head_version_number: number | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.started })
  head_opened_at: Date | null;
  /** When the head is sealed by time (opened + window), unless it fills first */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  head_seals_at: Date | null;
  /** Spans landed in the head so far */
  @ApiProperty({ example: 1180 })
  head_spans: number;
  @ApiProperty({ example: 3600 })
  window_seconds: number;
  @ApiProperty({ example: 100_000 })
  max_spans: number;
  /** Spans acknowledged to exporters and not landed yet */
  @ApiProperty({ example: 0 })
  pending_spans: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  last_received_at: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  last_landed_at: Date | null;
  /** When the stream began (its first span or setting); null before */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.created })
  created_at: Date | null;
}

class OtlpPartialSuccess {
  /** Spans the service rejected (an int64, as a string in the OTLP JSON mapping) */
  @ApiProperty({ type: String, example: '2' })
  rejectedSpans: string;
  /** Why, with where to read the rejected spans and their payloads */
  @ApiProperty({
    example:
      '2 spans rejected: invalid_id (2); the first, request 1, span 4: span_id is not 16 hex characters. GET /traces/runs/{run_id}/drops lists them with their payloads',
  })
  errorMessage: string;
}

/**
 * An ExportTraceServiceResponse in the OTLP JSON mapping (binary protobuf for a protobuf
 * request): empty when every span was accepted.
 */
export class OtlpExportResponse {
  @ApiPropertyOptional({ type: OtlpPartialSuccess })
  partialSuccess?: OtlpPartialSuccess;
}

class OtlpLogsPartialSuccess {
  /** Log records the service rejected (an int64, as a string in the OTLP JSON mapping) */
  @ApiProperty({ type: String, example: '1' })
  rejectedLogRecords: string;
  /** Why, with where to read the rejected records and their payloads */
  @ApiProperty({
    example:
      '1 log record rejected: missing_trace_context (1); the first, log record 3: the log record has no trace id: only records correlated to a span are kept. GET /traces/runs/{run_id}/drops lists them with their payloads',
  })
  errorMessage: string;
}

/**
 * An ExportLogsServiceResponse in the OTLP JSON mapping (binary protobuf for a protobuf
 * request): empty when every log record was accepted.
 */
export class OtlpLogsExportResponse {
  @ApiPropertyOptional({ type: OtlpLogsPartialSuccess })
  partialSuccess?: OtlpLogsPartialSuccess;
}
