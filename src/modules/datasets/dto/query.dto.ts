import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ArrayMaxSize,
} from 'class-validator';
import { ApiSchemaExample, EXAMPLE_ID, EXAMPLE_ROW } from '#libs/common/openapi-examples.js';
import { SortKeys, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const MAX_QUERY_LIMIT = 1000;

/** The query of the examples: English billing and refund questions, by topic. */
const EXAMPLE_FILTER = {
  and: [
    { field: 'language', op: 'eq', value: 'en' },
    { field: 'topic', op: 'in', value: ['billing', 'returns_refunds'] },
  ],
};

const filterSchema = {
  type: 'object' as const,
  additionalProperties: true,
  description:
    'A filter in the query language (docs/query-language.md): {"and": [...]}, {"or": [...]}, {"not": {...}}, or a predicate {"field": "column.path", "op": "eq|ne|lt|lte|gt|gte|in|contains|starts_with|is_null", "value": ...}; {"dimension": "topic", "op": ..., "value": ...} tests a dimension value',
  example: EXAMPLE_FILTER,
};
const EXAMPLE_QUERY = {
  filter: EXAMPLE_FILTER,
  sort: [{ field: 'topic', direction: 'asc' }],
  select: ['question', 'answer', 'topic'],
  limit: 50,
  offset: 0,
  include_total: true,
};

@ApiSchemaExample(EXAMPLE_QUERY)
export class RowQueryRequest {
  @ApiPropertyOptional(filterSchema)
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;

  /** Sort keys, first wins; rows keep their dataset order after them */
  @SortKeys([{ field: 'topic', direction: 'asc' }])
  sort?: Array<Record<string, unknown>>;

  /** Columns to return (default: all); `_row_id` always comes back */
  @ApiPropertyOptional({ example: ['question', 'answer', 'topic'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  select?: string[];

  /** Rows per page, 1..1000 */
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_QUERY_LIMIT, default: 50, example: 50 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_QUERY_LIMIT)
  limit?: number;

  /** Rows to skip (use either offset or cursor) */
  @ApiPropertyOptional({ minimum: 0, default: 0, example: 0 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  offset?: number;

  /** `next_cursor` of the previous page of the same query */
  @ApiPropertyOptional({ example: 'eyJvZmZzZXQiOjUwfQ' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  cursor?: string;

  /** Count the matching rows, up to 10,000 (default true; false skips the count) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  include_total?: boolean;
}

@ApiSchemaExample({ ...EXAMPLE_QUERY, version_id: EXAMPLE_ID.version })
export class DatasetQueryRequest extends RowQueryRequest {
  /** The version to query; default: the current version, else the newest */
  @ApiPropertyOptional({ example: EXAMPLE_ID.version })
  @ValidateIfPresent()
  @IsUUID()
  version_id?: string;
}

export class QueryResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 3 })
  version_number: number;
  /** Matching rows: `_row_id` and the selected columns */
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [{ _row_id: EXAMPLE_ID.rows[0], ...EXAMPLE_ROW }],
  })
  items: Array<Record<string, unknown>>;
  /** Rows matching the filter, counted up to 10,000 (absent when include_total is false) */
  @ApiPropertyOptional({ example: 57 })
  total?: number;
  /** True when more than 10,000 rows match: `total` is then 10,000 */
  @ApiPropertyOptional({ example: false })
  total_capped?: boolean;
  @ApiProperty({ example: 50 })
  limit: number;
  @ApiProperty({ example: 0 })
  offset: number;
  /** Pass as `cursor` for the next page; null on the last page. Versions are immutable, so pages stay stable. */
  @ApiProperty({ type: 'string', nullable: true, example: 'eyJvZmZzZXQiOjUwfQ' })
  next_cursor: string | null;
}
