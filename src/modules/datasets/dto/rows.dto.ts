import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsObject, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { MAX_ROWS_PER_EDIT } from '../rows.rules.js';
import { DatasetVersionResponse } from './dataset.dto.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

export class InsertRowsRequest {
  /** Rows to stage for insertion (1..1000), each a JSON object of columns; a `_row_id` (UUID) is kept as the row's id, else one is assigned */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, minItems: 1, maxItems: MAX_ROWS_PER_EDIT })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_ROWS_PER_EDIT) @IsObject({ each: true })
  rows: Array<Record<string, unknown>>;
}

export class UpdateRowsRequest {
  /** Row id -> new values (1..1000 rows). With `merge` (default) the given columns replace theirs and the others stay; with `replace` the object becomes the whole row */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'object', additionalProperties: true }, example: { '0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11': { expected_output: 'Paris' } } })
  @IsObject()
  rows: Record<string, Record<string, unknown>>;

  @ApiPropertyOptional({ enum: ['merge', 'replace'], default: 'merge' })
  @ValidateIf(present) @IsIn(['merge', 'replace'])
  mode?: 'merge' | 'replace';
}

export class DeleteRowsRequest {
  /** Ids of the rows to stage for deletion (1..1000) */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_ROWS_PER_EDIT) @IsUUID('all', { each: true })
  row_ids: string[];
}

export class CommitRowsRequest {
  /** What the new version changes and why */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;

  /** Promote the new version to current at once (default false: it stays a candidate) */
  @ValidateIf(present) @IsBoolean()
  promote?: boolean;
}

export class RowOperationResponse {
  dataset_id: string;
  /** The version the commit created */
  version: DatasetVersionResponse;
  inserted: number;
  updated: number;
  deleted: number;
  /** Rows in the new version */
  row_count: number;
}

export class StagedEditResponse {
  row_id: string;
  @ApiProperty({ enum: ['insert', 'update', 'delete'] })
  op: 'insert' | 'update' | 'delete';
  /** The row as it will be (null for a deletion) */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  row: Record<string, unknown> | null;
  /** Number of the newest version when the edit was staged */
  base_version: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  staged_by: string | null;
  @ApiProperty({ type: 'string', nullable: true })
  staged_by_email: string | null;
  staged_at: Date;
}
