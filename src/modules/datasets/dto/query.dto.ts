import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsInt, IsObject, IsString, IsUUID, Max, MaxLength, Min, ValidateIf } from 'class-validator';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

export const MAX_QUERY_LIMIT = 1000;

const filterSchema = {
  type: 'object' as const,
  additionalProperties: true,
  description:
    'A filter in the query language (docs/query-language.md): {"and": [...]}, {"or": [...]}, {"not": {...}}, or a predicate {"field": "column.path", "op": "eq|ne|lt|lte|gt|gte|in|contains|starts_with|is_null", "value": ...}; {"dimension": "topic", "op": ..., "value": ...} tests a dimension value',
  example: { and: [{ field: 'language', op: 'eq', value: 'en' }, { field: 'metadata.difficulty', op: 'gte', value: 3 }] },
};

export class RowQueryRequest {
  @ApiPropertyOptional(filterSchema)
  @ValidateIf(present) @IsObject()
  filter?: Record<string, unknown>;

  /** Sort keys, first wins; rows keep their dataset order after them */
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, direction: { type: 'string', enum: ['asc', 'desc'] } }, required: ['field'] }, example: [{ field: 'score', direction: 'desc' }] })
  @ValidateIf(present) @IsArray()
  sort?: Array<Record<string, unknown>>;

  /** Columns to return (default: all); `_row_id` always comes back */
  @ValidateIf(present) @IsArray() @IsString({ each: true })
  select?: string[];

  /** Rows per page, 1..1000 */
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_QUERY_LIMIT, default: 50 })
  @ValidateIf(present) @IsInt() @Min(1) @Max(MAX_QUERY_LIMIT)
  limit?: number;

  /** Rows to skip (use either offset or cursor) */
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @ValidateIf(present) @IsInt() @Min(0) @Max(100_000_000)
  offset?: number;

  /** `next_cursor` of the previous page of the same query */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  cursor?: string;

  /** Count the matching rows, up to 10,000 (default true; false skips the count) */
  @ValidateIf(present) @IsBoolean()
  include_total?: boolean;
}

export class DatasetQueryRequest extends RowQueryRequest {
  /** The version to query; default: the current version, else the newest */
  @ValidateIf(present) @IsUUID()
  version_id?: string;
}

export class QueryResponse {
  dataset_id: string;
  version_id: string;
  version_number: number;
  /** Matching rows: `_row_id` and the selected columns */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  items: Array<Record<string, unknown>>;
  /** Rows matching the filter, counted up to 10,000 (absent when include_total is false) */
  @ApiPropertyOptional()
  total?: number;
  /** True when more than 10,000 rows match: `total` is then 10,000 */
  @ApiPropertyOptional()
  total_capped?: boolean;
  limit: number;
  offset: number;
  /** Pass as `cursor` for the next page; null on the last page. Versions are immutable, so pages stay stable. */
  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}
