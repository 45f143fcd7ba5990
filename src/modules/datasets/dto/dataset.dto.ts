import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { TAG_PATTERN, UpdateLabelledRecordRequest } from '../../../../libs/common/labelled-record.dto.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { VERSION_STATES, type VersionState } from '../entities/dataset-version.entity.js';
import { DATASET_KINDS, type DatasetKind } from '../entities/dataset.entity.js';
import { UPLOAD_FORMATS, type UploadFormat } from '../ingest/row-sources.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
// Optional, but never null: an explicit null is refused (400) rather than written over a required column.
const present = (_: object, value: unknown) => value !== undefined;
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
  @IsOptional() @IsUUID()
  workspace_id?: string;

  /** Case-insensitive substring of the name */
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ enum: DATASET_KINDS })
  @IsOptional() @IsIn(DATASET_KINDS)
  kind?: DatasetKind;

  /** Only datasets carrying this tag */
  @IsOptional() @IsString() @Matches(TAG_PATTERN)
  tag?: string;

  @ApiPropertyOptional({ enum: DATASET_SORTS, default: '-created_at' })
  @IsOptional() @IsIn(DATASET_SORTS)
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
  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name?: string;

  /** Add the file as a new version of this dataset instead of creating one */
  @ValidateIf(present) @IsUUID()
  dataset_id?: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** Tags: a JSON array or a comma-separated list */
  @ApiPropertyOptional({ type: [String] })
  @ValidateIf(present) @Transform(tagList) @IsArray() @ArrayMaxSize(20) @Matches(TAG_PATTERN, { each: true })
  tags?: string[];

  /** The file's format; by default taken from the file name's extension (.csv, .json, .jsonl or .ndjson, .parquet) */
  @ApiPropertyOptional({ enum: UPLOAD_FORMATS })
  @ValidateIf(present) @IsIn(UPLOAD_FORMATS)
  format?: UploadFormat;

  /** CSV field delimiter, one character (default `,`) */
  @ValidateIf(present) @IsString() @Matches(/^[^\r\n"]$/, { message: 'delimiter must be one character other than a quote or a line break' })
  delimiter?: string;

  /** Message of the version the upload creates */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

/** The multipart body as documented: the file and the text fields (validation sees only the fields). */
export class UploadDatasetForm extends UploadDatasetRequest {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file: CSV (with a header line), JSON (an array of objects), JSON Lines or Parquet' })
  file: unknown;
}

export class UpdateDatasetRequest extends UpdateLabelledRecordRequest {}

export class ColumnMappingDto {
  /** Column holding the input (prompt, question, conversation turn) */
  input?: string;
  /** Column holding the reference answer */
  expected_output?: string;
  /** Column holding retrieved or supplied context */
  context?: string;
  /** Column grouping rows into conversations (multi-turn sessions) */
  session_id?: string;
  /** Columns carried along as metadata */
  metadata?: string[];
}

export class UploadInfoDto {
  filename: string;
  @ApiProperty({ enum: UPLOAD_FORMATS })
  format: string;
  bytes: number;
}

export class VersionChangesDto {
  inserted: number;
  updated: number;
  deleted: number;
}

export class DatasetSummaryDto {
  id: string;
  name: string;
  @ApiProperty({ enum: DATASET_KINDS })
  kind: DatasetKind;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  current_version_id: string | null;
}

export class DatasetVersionResponse {
  id: string;
  dataset_id: string;
  workspace_id: string;
  /** 1, 2, 3, ... per dataset */
  number: number;
  /** `candidate` when created; `current` once promoted (one per dataset); `retired` once demoted */
  @ApiProperty({ enum: VERSION_STATES })
  state: VersionState;
  message: string;
  /** `upload` (a file) or `commit` (staged row edits) */
  @ApiProperty({ enum: ['upload', 'commit', 'generated', 'landed'], description: 'How the version was made: an upload, committed row edits, rows generated by an SDG run, or landed traces' })
  source: 'upload' | 'commit' | 'generated' | 'landed';
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  parent_version_id: string | null;
  row_count: number;
  /** Column names in order */
  columns: string[];
  /** Canonical fields mapped onto columns (see POST .../map) */
  mapping: ColumnMappingDto;
  /** SHA-256 over the version's rows (row id and content, in order): equal content, equal hash */
  content_sha256: string;
  @ApiPropertyOptional({ description: 'The uploaded file, for versions made by an upload' })
  upload?: UploadInfoDto;
  @ApiPropertyOptional({ description: 'What the commit changed, for versions made by a commit' })
  changes?: VersionChangesDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  promoted_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  retired_at: Date | null;
}




export class DatasetResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  /** `rows` (test cases) or `traces` (landed production traces) */
  @ApiProperty({ enum: DATASET_KINDS })
  kind: DatasetKind;
  tags: string[];
  /** The promoted version, if any */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  current_version_id: string | null;
  /** The newest version (null before the first) */
  @ApiProperty({ type: () => DatasetVersionResponse, nullable: true })
  latest_version: DatasetVersionResponse | null;
  /** Number of versions */
  version_count: number;
  /** Row edits staged and not yet committed */
  staged_edits: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  /** Optimistic-concurrency counter (also in the ETag) */
  version: number;
}

export class ColumnStatsDto {
  name: string;
  /** Dominant JSON type of the non-null values; `mixed` when none has 90% of them; `null` when every value is null */
  @ApiProperty({ enum: ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null', 'mixed'] })
  type: string;
  /** Count of values per JSON type; rows without the column count as `null` */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  types: Record<string, number>;
  null_count: number;
  /** Number of distinct non-null values */
  distinct_count: number;
  /** Smallest number (numeric columns) */
  @ApiPropertyOptional({ type: 'number', nullable: true })
  min?: number | null;
  @ApiPropertyOptional({ type: 'number', nullable: true })
  max?: number | null;
  /** Shortest string, in characters (text columns) */
  @ApiPropertyOptional({ type: 'integer', nullable: true })
  min_length?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true })
  max_length?: number | null;
  @ApiPropertyOptional({ type: 'number', nullable: true })
  mean_length?: number | null;
}

export class SchemaResponse {
  dataset_id: string;
  version_id: string;
  version_number: number;
  row_count: number;
  @ApiProperty({ type: () => [ColumnStatsDto] })
  columns: ColumnStatsDto[];
  mapping: ColumnMappingDto;
}

export class SchemaQuery {
  /** The version to describe; default: the current version, else the newest */
  @IsOptional() @IsUUID()
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
  @IsOptional() @IsIn(VERSION_STATES)
  state?: VersionState;
}

export class SnapshotResponse {
  version_id: string;
  version_number: number;
  @ApiProperty({ enum: VERSION_STATES })
  state: VersionState;
  row_count: number;
  content_sha256: string;
  /** Formats the snapshot downloads as (GET .../download-url?format=) */
  @ApiProperty({ enum: ['csv', 'jsonl', 'parquet'], isArray: true })
  formats: string[];
  created_at: Date;
}

export class AuditEntryResponse {
  id: string;
  /** Dotted verb: dataset.created, dataset.updated, version.created, version.promoted, rows.staged, rows.committed, ... */
  action: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  actor_id: string | null;
  @ApiProperty({ type: 'string', nullable: true })
  actor_email: string | null;
  /** What changed (row ids, counts, versions, before and after values) */
  @ApiProperty({ type: 'object', additionalProperties: true })
  details: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true })
  request_id: string | null;
  created_at: Date;
}

export class AuditQuery {
  /** Entries at most (newest first), 1..500 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit: number = 100;

  /** Only entries older than this instant (ISO 8601), to page back */
  @IsOptional() @IsString() @Matches(/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/, { message: 'before must be an ISO 8601 date-time' })
  before?: string;
}

/** Maps canonical fields onto the version's columns; every named column must exist. Replaces the whole mapping. */
export class MapVersionRequest {
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(256)
  input?: string;
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(256)
  expected_output?: string;
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(256)
  context?: string;
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(256)
  session_id?: string;
  @ValidateIf(present) @IsArray() @ArrayMaxSize(200) @IsString({ each: true })
  metadata?: string[];
}
