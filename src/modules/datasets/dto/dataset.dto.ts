import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { TAG_PATTERN, UpdateLabelledRecordRequest } from '#libs/common/labelled-record.dto.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { VERSION_STATES, type VersionState } from '../entities/dataset-version.entity.js';
import { DATASET_KINDS, type DatasetKind } from '../entities/dataset.entity.js';
import { UPLOAD_FORMATS, type UploadFormat } from '../ingest/row-sources.js';
import { EXAMPLE_AT, EXAMPLE_CONTENT_SHA256, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent, Trim } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Questions customers asked in April, with answers reviewed by the support team';

/** Multipart fields arrive as text: `tags` may be a JSON array or a comma-separated list. */
const tagList = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return value;
    }
  }
  return text ? text.split(',').map((t) => t.trim()) : [];
};

export const DATASET_SORTS = ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'] as const;

export class ListDatasetsQuery extends PageQueryDto {
  /** Only datasets of this workspace; without it, datasets of every workspace you belong to */
  @IsOptional()
  @IsUUID()
  workspace_id?: string;

  /** Case-insensitive substring of the name */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ enum: DATASET_KINDS })
  @IsOptional()
  @IsIn(DATASET_KINDS)
  kind?: DatasetKind;

  /** Only datasets carrying this tag */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(TAG_PATTERN)
  tag?: string;

  @ApiPropertyOptional({ enum: DATASET_SORTS, default: '-created_at' })
  @IsOptional()
  @IsIn(DATASET_SORTS)
  sort?: (typeof DATASET_SORTS)[number];
}

export class UploadDatasetQuery {
  /** The workspace that will own the dataset (members and above) */
  @IsUUID()
  workspace_id: string;
}

/** The multipart text fields next to the `file` part. */
export class UploadDatasetRequest {
  /** Name of the new dataset (1..200 characters, unique in the workspace); defaults to the file name without its extension */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.dataset })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  /** Add the file as a new version of this dataset instead of creating one */
  @ApiPropertyOptional({ example: EXAMPLE_ID.dataset })
  @ValidateIfPresent()
  @IsUUID()
  dataset_id?: string;

  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Tags: a JSON array or a comma-separated list */
  @ApiPropertyOptional({ type: [String], example: ['golden', 'faq'] })
  @ValidateIfPresent()
  @Transform(tagList)
  @IsArray()
  @ArrayMaxSize(20)
  @MaxLength(64, { each: true })
  @Matches(TAG_PATTERN, { each: true })
  tags?: string[];

  /** The file's format; by default taken from the file name's extension (.csv, .json, .jsonl or .ndjson, .parquet) */
  @ApiPropertyOptional({ enum: UPLOAD_FORMATS, example: 'csv' })
  @ValidateIfPresent()
  @IsIn(UPLOAD_FORMATS)
  format?: UploadFormat;

  /** CSV field delimiter, one character (default `,`) */
  @ApiPropertyOptional({ example: ',' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1)
  @Matches(/^[^\r\n"]$/, { message: 'delimiter must be one character other than a quote or a line break' })
  delimiter?: string;

  /** Message of the version the upload creates */
  @ApiPropertyOptional({ example: 'April questions, reviewed' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

/** The multipart body as documented: the file and the text fields (validation sees only the fields). */
export class UploadDatasetForm extends UploadDatasetRequest {
  @ApiProperty({
    type: 'string',
    format: 'binary',
    // UPLOAD_MAX_BYTES' default; a deployment may set another (larger is 413 payload_too_large).
    maxLength: 1024 ** 3,
    description:
      'The file: CSV (with a header line), JSON (an array of objects), JSON Lines or Parquet; at most `UPLOAD_MAX_BYTES` (default 1 GiB)',
  })
  file: unknown;
}

export class UpdateDatasetRequest extends UpdateLabelledRecordRequest {}

export class ColumnMappingDto {
  /** Column holding the input (prompt, question, conversation turn) */
  @ApiPropertyOptional({ example: 'question' })
  input?: string;
  /** Column holding the reference answer */
  @ApiPropertyOptional({ example: 'answer' })
  expected_output?: string;
  /** Column holding retrieved or supplied context */
  @ApiPropertyOptional({ example: 'context' })
  context?: string;
  /** Column grouping rows into conversations (multi-turn sessions) */
  @ApiPropertyOptional({ example: 'conversation_id' })
  session_id?: string;
  /** Columns carried along as metadata */
  @ApiPropertyOptional({ example: ['topic', 'language'] })
  metadata?: string[];
}

export class UploadInfoDto {
  @ApiProperty({ example: 'faq-golden-set.csv' })
  filename: string;
  @ApiProperty({ enum: UPLOAD_FORMATS, example: 'csv' })
  format: string;
  @ApiProperty({ example: 48213 })
  bytes: number;
}

export class VersionChangesDto {
  @ApiProperty({ example: 12 })
  inserted: number;
  @ApiProperty({ example: 3 })
  updated: number;
  @ApiProperty({ example: 1 })
  deleted: number;
}

export class DatasetSummaryDto {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.dataset })
  name: string;
  @ApiProperty({ enum: DATASET_KINDS, example: 'rows' })
  kind: DatasetKind;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.version })
  current_version_id: string | null;
}

export class DatasetVersionResponse {
  @ApiProperty({ example: EXAMPLE_ID.version })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** 1, 2, 3, ... per dataset */
  @ApiProperty({ example: 3 })
  number: number;
  /** `candidate` when created; `current` once promoted (one per dataset); `retired` once demoted */
  @ApiProperty({ enum: VERSION_STATES, example: 'current' })
  state: VersionState;
  @ApiProperty({ example: 'April questions, reviewed' })
  message: string;
  /** `upload` (a file) or `commit` (staged row edits) */
  @ApiProperty({
    enum: ['upload', 'commit', 'generated', 'landed'],
    description:
      'How the version was made: an upload, committed row edits, rows generated by an SDG run, or landed traces',
    example: 'commit',
  })
  source: 'upload' | 'commit' | 'generated' | 'landed';
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.previousVersion })
  parent_version_id: string | null;
  @ApiProperty({ example: 214 })
  row_count: number;
  /** Column names in order */
  @ApiProperty({ example: ['question', 'answer', 'context', 'conversation_id', 'topic', 'language'] })
  columns: string[];
  /** Canonical fields mapped onto columns (see POST .../map) */
  mapping: ColumnMappingDto;
  /** SHA-256 over the version's rows (row id and content, in order): equal content, equal hash */
  @ApiProperty({ example: EXAMPLE_CONTENT_SHA256 })
  content_sha256: string;
  @ApiPropertyOptional({ description: 'The uploaded file, for versions made by an upload' })
  upload?: UploadInfoDto;
  @ApiPropertyOptional({ description: 'What the commit changed, for versions made by a commit' })
  changes?: VersionChangesDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  promoted_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  retired_at: Date | null;
}

export class DatasetResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.dataset })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  /** `rows` (test cases) or `traces` (landed production traces) */
  @ApiProperty({ enum: DATASET_KINDS, example: 'rows' })
  kind: DatasetKind;
  @ApiProperty({ example: ['golden', 'faq'] })
  tags: string[];
  /** The promoted version, if any */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.version })
  current_version_id: string | null;
  /** The newest version (null before the first) */
  @ApiProperty({ type: () => DatasetVersionResponse, nullable: true })
  latest_version: DatasetVersionResponse | null;
  /** Number of versions */
  @ApiProperty({ example: 3 })
  version_count: number;
  /** Row edits staged and not yet committed */
  @ApiProperty({ example: 0 })
  staged_edits: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
  /** Optimistic-concurrency counter (also in the ETag) */
  @ApiProperty({ example: 5 })
  version: number;
}

export class ColumnStatsDto {
  @ApiProperty({ example: 'question' })
  name: string;
  /** Dominant JSON type of the non-null values; `mixed` when none has 90% of them; `null` when every value is null */
  @ApiProperty({
    enum: ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null', 'mixed'],
    example: 'string',
  })
  type: string;
  /** Count of values per JSON type; rows without the column count as `null` */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { string: 214 } })
  types: Record<string, number>;
  @ApiProperty({ example: 0 })
  null_count: number;
  /** Number of distinct non-null values */
  @ApiProperty({ example: 211 })
  distinct_count: number;
  /** Smallest number (numeric columns) */
  @ApiPropertyOptional({ type: 'number', nullable: true, example: null })
  min?: number | null;
  @ApiPropertyOptional({ type: 'number', nullable: true, example: null })
  max?: number | null;
  /** Shortest string, in characters (text columns) */
  @ApiPropertyOptional({ type: 'integer', nullable: true, example: 12 })
  min_length?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, example: 388 })
  max_length?: number | null;
  @ApiPropertyOptional({ type: 'number', nullable: true, example: 74.6 })
  mean_length?: number | null;
}

export class SchemaResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 3 })
  version_number: number;
  @ApiProperty({ example: 214 })
  row_count: number;
  @ApiProperty({ type: () => [ColumnStatsDto] })
  columns: ColumnStatsDto[];
  mapping: ColumnMappingDto;
}

export class SchemaQuery {
  /** The version to describe; default: the current version, else the newest */
  @IsOptional()
  @IsUUID()
  version_id?: string;
}

export class GetDatasetVersionResponse extends DatasetVersionResponse {
  /** The dataset the version belongs to */
  @ApiProperty({ type: () => DatasetSummaryDto })
  dataset: DatasetSummaryDto;
  /** Inferred column types and statistics */
  @ApiProperty({ type: () => [ColumnStatsDto] })
  schema: ColumnStatsDto[];
}

export class ListVersionsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: VERSION_STATES })
  @IsOptional()
  @IsIn(VERSION_STATES)
  state?: VersionState;
}

export class SnapshotResponse {
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 3 })
  version_number: number;
  @ApiProperty({ enum: VERSION_STATES, example: 'current' })
  state: VersionState;
  @ApiProperty({ example: 214 })
  row_count: number;
  @ApiProperty({ example: EXAMPLE_CONTENT_SHA256 })
  content_sha256: string;
  /** Formats the snapshot downloads as (GET .../download-url?format=) */
  @ApiProperty({ enum: ['csv', 'jsonl', 'parquet'], isArray: true, example: ['csv', 'jsonl', 'parquet'] })
  formats: string[];
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class AuditEntryResponse {
  @ApiProperty({ example: '4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d' })
  id: string;
  /** Dotted verb: dataset.created, dataset.updated, version.created, version.promoted, rows.staged, rows.committed, ... */
  @ApiProperty({ example: 'rows.committed' })
  action: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  actor_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.userEmail })
  actor_email: string | null;
  /** What changed (row ids, counts, versions, before and after values) */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { version: 3, inserted: 12, updated: 3, deleted: 1 },
  })
  details: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.request })
  request_id: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class AuditQuery {
  /** Entries at most (newest first), 1..500 */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit: number = 100;

  /** Only entries older than this instant (ISO 8601), to page back */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/, { message: 'before must be an ISO 8601 date-time' })
  before?: string;
}

/** Maps canonical fields onto the version's columns; every named column must exist. Replaces the whole mapping. */
export class MapVersionRequest {
  @ApiPropertyOptional({ example: 'question' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  input?: string;
  @ApiPropertyOptional({ example: 'answer' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  expected_output?: string;
  @ApiPropertyOptional({ example: 'context' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  context?: string;
  @ApiPropertyOptional({ example: 'conversation_id' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  session_id?: string;
  @ApiPropertyOptional({ example: ['topic', 'language'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  metadata?: string[];
}
