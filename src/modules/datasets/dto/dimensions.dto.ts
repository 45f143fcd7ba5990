import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { MAX_ROWS_PER_EDIT } from '../rows/rows.rules.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_ROW, EXAMPLE_TRACE } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent, Trim } from '#libs/common/dto-decorators.js';
import { IsStringListRecord, stringListRecordSchema } from '#libs/common/record-validators.js';

export const DIMENSION_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,99}$/;

/** Dimension -> values in a query or a partition: a dimension's name and values as assignments take them. */
const DIMENSION_VALUES = { maxKeys: 50, maxItems: 1000, maxLength: 200 };

const ruleSchema = {
  type: 'object' as const,
  additionalProperties: true,
  description: 'Assign every row of the version that matches this filter (docs/query-language.md)',
  example: { field: 'question', op: 'contains', value: 'refund' },
};

@ApiSchemaExample({
  dimension: 'topic',
  value: 'cancellation',
  row_ids: [EXAMPLE_ID.rows[1]],
  version_id: EXAMPLE_ID.version,
  description: 'What the customer is contacting support about',
})
export class AssignDimensionRequest {
  /** The dimension (axis of coverage), e.g. `topic`; created on first use */
  @ApiProperty({ example: 'topic' })
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(DIMENSION_NAME, {
    message: 'dimension must be 1..100 letters, digits, spaces or _ . : / - and start with a letter or digit',
  })
  dimension: string;

  /** The value to assign, e.g. `billing`; added to the dimension's values on first use */
  @ApiProperty({ example: 'cancellation' })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  value: string;

  /** Rows to assign (1..1000); give this or `rule` */
  @ApiPropertyOptional({ maxItems: MAX_ROWS_PER_EDIT, example: [EXAMPLE_ID.rows[1]] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ROWS_PER_EDIT)
  @IsUUID('all', { each: true })
  row_ids?: string[];

  @ApiPropertyOptional(ruleSchema)
  @ValidateIfPresent()
  @IsObject()
  rule?: Record<string, unknown>;

  /** The version `rule` is evaluated on and `row_ids` must belong to; default: the current version, else the newest */
  @ApiPropertyOptional({ example: EXAMPLE_ID.version })
  @ValidateIfPresent()
  @IsUUID()
  version_id?: string;

  /** Describes the dimension when this call creates it */
  @ApiPropertyOptional({ example: 'What the customer is contacting support about' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export class AssignDimensionResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ example: 'cancellation' })
  value: string;
  /** Rows that now carry the value */
  @ApiProperty({ example: 1 })
  assigned: number;
  /** Of those, rows that carried another value of the dimension before */
  @ApiProperty({ example: 1 })
  reassigned: number;
  /** The call created the dimension */
  @ApiProperty({ example: false })
  created_dimension: boolean;
  /** The call added the value to the dimension */
  @ApiProperty({ example: false })
  created_value: boolean;
}

export class DimensionValueCount {
  @ApiProperty({ example: 'billing' })
  value: string;
  /** Rows of the version with this value */
  @ApiProperty({ example: 38 })
  count: number;
}

export class DimensionSummary {
  @ApiProperty({ example: 'topic' })
  name: string;
  @ApiProperty({ example: 'What the customer is contacting support about' })
  description: string;
  @ApiProperty({ type: () => [DimensionValueCount] })
  values: DimensionValueCount[];
  /** Rows of the version with a value of this dimension */
  @ApiProperty({ example: 201 })
  assigned_rows: number;
  /** Rows of the version without one */
  @ApiProperty({ example: 13 })
  unassigned_rows: number;
}

export class DatasetDimensionsResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 214 })
  row_count: number;
  @ApiProperty({ type: () => [DimensionSummary] })
  dimensions: DimensionSummary[];
}

export class DimensionValuesQuery {
  /** Only this dimension (default: every dimension) */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  dimension?: string;
}

export class DimensionValueEntry {
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ example: 'billing' })
  value: string;
  @ApiProperty({ example: 38 })
  count: number;
  /** Share of the version's rows, 0..1 */
  @ApiProperty({ example: 0.18 })
  share: number;
}

export class DimensionValuesResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 214 })
  row_count: number;
  @ApiProperty({ type: () => [DimensionValueEntry] })
  values: DimensionValueEntry[];
}

export class DimensionsQueryRequest {
  /** Dimension -> accepted values; a row matches when it has one of the values of every dimension named */
  @ApiPropertyOptional({
    ...stringListRecordSchema(DIMENSION_VALUES),
    example: { topic: ['account_access', 'billing'], customer_persona: ['new_customer'] },
  })
  @ValidateIfPresent()
  @IsStringListRecord(DIMENSION_VALUES)
  dimensions?: Record<string, string[]>;

  /** A further filter in the query language */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { field: 'language', op: 'eq', value: 'en' },
  })
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;

  /** Dimensions to count the matching rows by (each combination of their values, `null` for none) */
  @ApiPropertyOptional({ example: ['topic'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(3)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  group_by?: string[];

  @ApiPropertyOptional({
    minimum: 0,
    maximum: 1000,
    default: 50,
    description: 'Matching rows to return (0 for counts only)',
    example: 20,
  })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ example: 0 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset?: number;
}

export class DimensionGroupCount {
  /** The combination: dimension -> value (null when the row has none) */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    example: { topic: 'account_access', customer_persona: 'new_customer' },
  })
  values: Record<string, string | null>;
  @ApiProperty({ example: 11 })
  count: number;
}

export class DatasetDimensionsQueryResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  /** Rows matching the dimension values and filter */
  @ApiProperty({ example: 11 })
  total: number;
  @ApiProperty({ type: () => [DimensionGroupCount] })
  groups: DimensionGroupCount[];
  /** Matching rows (with `_row_id` and `_dimensions`) */
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [
      {
        _row_id: EXAMPLE_ID.rows[0],
        ...EXAMPLE_ROW,
        _dimensions: { topic: 'account_access', customer_persona: 'new_customer' },
      },
    ],
  })
  items: Array<Record<string, unknown>>;
  @ApiProperty({ example: 20 })
  limit: number;
  @ApiProperty({ example: 0 })
  offset: number;
}

export const PARTITION_LEVELS = ['session', 'trace', 'span'] as const;
export type PartitionLevel = (typeof PARTITION_LEVELS)[number];

export class CreatePartitionRequest {
  /** Unique within the version, 1..200 characters */
  @ApiProperty({ example: 'billing-en' })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'English billing questions' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** What `resolve` lists: `session` (rows grouped by the mapped session_id column; one row, one session without it), or `trace` and `span` for trace datasets */
  @ApiPropertyOptional({ enum: PARTITION_LEVELS, default: 'session', example: 'session' })
  @ValidateIfPresent()
  @IsIn(PARTITION_LEVELS)
  level?: PartitionLevel;

  /** Dimension -> accepted values */
  @ApiPropertyOptional({
    ...stringListRecordSchema(DIMENSION_VALUES),
    example: { topic: ['billing', 'returns_refunds'] },
  })
  @ValidateIfPresent()
  @IsStringListRecord(DIMENSION_VALUES)
  dimension_values?: Record<string, string[]>;

  /** A filter in the query language */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { field: 'language', op: 'eq', value: 'en' },
  })
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;
}

export class PartitionResponse {
  @ApiProperty({ example: EXAMPLE_ID.partition })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 'billing-en' })
  name: string;
  @ApiProperty({ example: 'English billing questions' })
  description: string;
  @ApiProperty({ enum: PARTITION_LEVELS, example: 'session' })
  level: PartitionLevel;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { topic: ['billing', 'returns_refunds'] },
  })
  dimension_values: Record<string, string[]>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { field: 'language', op: 'eq', value: 'en' },
  })
  filter: Record<string, unknown> | null;
  /** Rows the partition holds now (dimension assignments may change it) */
  @ApiProperty({ example: 41 })
  row_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class ResolvePartitionQuery {
  /** Members per page, 1..1000 */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit: number = 100;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset: number = 0;

  /** Include each member's rows in full (default false: ids only) */
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  include_rows: boolean = false;
}

export class SessionPartition {
  @ApiProperty({ enum: ['session'], example: 'session' })
  level: 'session';
  /** The session id (the mapped session_id column's value, or the row id of a single-row session) */
  @ApiProperty({ example: 'conv-0193' })
  session_id: string;
  /** Rows of the session, in dataset order */
  @ApiProperty({ example: [EXAMPLE_ID.rows[0], EXAMPLE_ID.rows[1]] })
  row_ids: string[];
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [{ _row_id: EXAMPLE_ID.rows[0], question: 'How do I reset my password?', conversation_id: 'conv-0193' }],
  })
  rows?: Array<Record<string, unknown>>;
}

export class TracePartition {
  @ApiProperty({ enum: ['trace'], example: 'trace' })
  level: 'trace';
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  trace_id: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'conv-0193' })
  session_id: string | null;
  /** Span rows of the trace, in start order */
  @ApiProperty({ example: [EXAMPLE_ID.rows[0]] })
  row_ids: string[];
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [{ _row_id: EXAMPLE_ID.rows[0], span_id: EXAMPLE_TRACE.span, name: 'ChatCompletion' }],
  })
  rows?: Array<Record<string, unknown>>;
}

export class SpanPartition {
  @ApiProperty({ enum: ['span'], example: 'span' })
  level: 'span';
  @ApiProperty({ example: EXAMPLE_TRACE.span })
  span_id: string;
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  trace_id: string;
  @ApiProperty({ example: EXAMPLE_ID.rows[0] })
  row_id: string;
}

export class AvailableMetric {
  @ApiProperty({ example: 'faithfulness' })
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged'], example: 'judged' })
  kind: 'deterministic' | 'judged';
  @ApiProperty({ example: 'A judge checks the output is supported by the context' })
  description: string;
  /** Whether the version's mapping provides every field the metric reads */
  @ApiProperty({ example: true })
  available: boolean;
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true, example: ['context'] })
  requires: string[];
  /** Fields the mapping lacks (map them with POST .../map) */
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true, example: [] })
  missing: string[];
}

export class DatasetVersionAvailableMetricsResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  /** The canonical fields mapped onto columns */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { input: 'question', expected_output: 'answer', context: 'context' },
  })
  mapping: Record<string, unknown>;
  @ApiProperty({ type: () => [AvailableMetric] })
  metrics: AvailableMetric[];
}

export class PartitionAvailableMetricsResponse extends DatasetVersionAvailableMetricsResponse {
  @ApiProperty({ example: EXAMPLE_ID.partition })
  partition_id: string;
  /** Rows of the partition */
  @ApiProperty({ example: 41 })
  row_count: number;
}
