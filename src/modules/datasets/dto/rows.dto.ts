import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsString,
  IsUUID,
  MaxLength,
} from 'class-validator';
import { MAX_ROWS_PER_EDIT } from '../rows/rows.rules.js';
import { DatasetVersionResponse } from './dataset.dto.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class InsertRowsRequest {
  /** Rows to stage for insertion (1..1000), each a JSON object of columns; a `_row_id` (UUID) is kept as the row's id, else one is assigned */
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    minItems: 1,
    maxItems: MAX_ROWS_PER_EDIT,
    example: [
      {
        question: 'Can I change my billing date?',
        answer: 'Yes: Settings > Billing > Billing date, once per month.',
        topic: 'billing',
        language: 'en',
      },
    ],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ROWS_PER_EDIT)
  @IsObject({ each: true })
  rows: Array<Record<string, unknown>>;
}

export class UpdateRowsRequest {
  /** Row id -> new values (1..1000 rows). With `merge` (default) the given columns replace theirs and the others stay; with `replace` the object becomes the whole row */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    example: {
      [EXAMPLE_ID.rows[1]]: {
        answer: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.',
      },
    },
  })
  @IsObject()
  rows: Record<string, Record<string, unknown>>;

  @ApiPropertyOptional({ enum: ['merge', 'replace'], default: 'merge', example: 'merge' })
  @ValidateIfPresent()
  @IsIn(['merge', 'replace'])
  mode?: 'merge' | 'replace';
}

export class DeleteRowsRequest {
  /** Ids of the rows to stage for deletion (1..1000) */
  @ApiProperty({ maxItems: MAX_ROWS_PER_EDIT, example: [EXAMPLE_ID.rows[2]] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ROWS_PER_EDIT)
  @IsUUID('all', { each: true })
  row_ids: string[];
}

export class CommitRowsRequest {
  /** What the new version changes and why */
  @ApiPropertyOptional({ example: 'Add billing-date questions, fix two answers' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;

  /** Promote the new version to current at once (default false: it stays a candidate) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  promote?: boolean;
}

export class RowOperationResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  /** The version the commit created */
  version: DatasetVersionResponse;
  @ApiProperty({ example: 12 })
  inserted: number;
  @ApiProperty({ example: 3 })
  updated: number;
  @ApiProperty({ example: 1 })
  deleted: number;
  /** Rows in the new version */
  @ApiProperty({ example: 214 })
  row_count: number;
}

export class StagedEditResponse {
  @ApiProperty({ example: EXAMPLE_ID.rows[1] })
  row_id: string;
  @ApiProperty({ enum: ['insert', 'update', 'delete'], example: 'update' })
  op: 'insert' | 'update' | 'delete';
  /** The row as it will be (null for a deletion) */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: {
      question: 'How do I cancel my plan?',
      answer: 'Settings > Plan > Cancel; the plan stays active until the end of the billing period.',
      topic: 'cancellation',
      language: 'en',
    },
  })
  row: Record<string, unknown> | null;
  /** Number of the newest version when the edit was staged */
  @ApiProperty({ example: 3 })
  base_version: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  staged_by: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.userEmail })
  staged_by_email: string | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  staged_at: Date;
}
