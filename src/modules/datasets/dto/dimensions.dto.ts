import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { MAX_ROWS_PER_EDIT } from '../rows.rules.js';

export const DIMENSION_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,99}$/;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const present = (_: object, value: unknown) => value !== undefined;

const ruleSchema = {
  type: 'object' as const,
  additionalProperties: true,
  description: 'Assign every row of the version that matches this filter (docs/query-language.md)',
  example: { field: 'question', op: 'contains', value: 'refund' },
};

export class AssignDimensionRequest {
  /** The dimension (axis of coverage), e.g. `topic`; created on first use */
  @Transform(trim) @IsString() @Matches(DIMENSION_NAME, { message: 'dimension must be 1..100 letters, digits, spaces or _ . : / - and start with a letter or digit' })
  dimension: string;

  /** The value to assign, e.g. `billing`; added to the dimension's values on first use */
  @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  value: string;

  /** Rows to assign (1..1000); give this or `rule` */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_ROWS_PER_EDIT) @IsUUID('all', { each: true })
  row_ids?: string[];

  @ApiPropertyOptional(ruleSchema)
  @ValidateIf(present) @IsObject()
  rule?: Record<string, unknown>;

  /** The version `rule` is evaluated on and `row_ids` must belong to; default: the current version, else the newest */
  @ValidateIf(present) @IsUUID()
  version_id?: string;

  /** Describes the dimension when this call creates it */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;
}

export class AssignDimensionResponse {
  dataset_id: string;
  version_id: string;
  dimension: string;
  value: string;
  /** Rows that now carry the value */
  assigned: number;
  /** Of those, rows that carried another value of the dimension before */
  reassigned: number;
  /** The call created the dimension */
  created_dimension: boolean;
  /** The call added the value to the dimension */
  created_value: boolean;
}

export class DimensionValueCount {
  value: string;
  /** Rows of the version with this value */
  count: number;
}

export class DimensionSummary {
  name: string;
  description: string;
  @ApiProperty({ type: () => [DimensionValueCount] })
  values: DimensionValueCount[];
  /** Rows of the version with a value of this dimension */
  assigned_rows: number;
  /** Rows of the version without one */
  unassigned_rows: number;
}

export class DatasetDimensionsResponse {
  dataset_id: string;
  version_id: string;
  row_count: number;
  @ApiProperty({ type: () => [DimensionSummary] })
  dimensions: DimensionSummary[];
}

export class DimensionValuesQuery {
  /** Only this dimension (default: every dimension) */
  @IsOptional() @IsString() @MaxLength(100)
  dimension?: string;
}

export class DimensionValueEntry {
  dimension: string;
  value: string;
  count: number;
  /** Share of the version's rows, 0..1 */
  share: number;
}

export class DimensionValuesResponse {
  dataset_id: string;
  version_id: string;
  row_count: number;
  @ApiProperty({ type: () => [DimensionValueEntry] })
  values: DimensionValueEntry[];
}

export class DimensionsQueryRequest {
  /** Dimension -> accepted values; a row matches when it has one of the values of every dimension named */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, example: { topic: ['billing', 'refunds'], persona: ['new customer'] } })
  @ValidateIf(present) @IsObject()
  dimensions?: Record<string, string[]>;

  /** A further filter in the query language */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject()
  filter?: Record<string, unknown>;

  /** Dimensions to count the matching rows by (each combination of their values, `null` for none) */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(3) @IsString({ each: true })
  group_by?: string[];

  @ApiPropertyOptional({ minimum: 0, maximum: 1000, default: 50, description: 'Matching rows to return (0 for counts only)' })
  @ValidateIf(present) @IsInt() @Min(0) @Max(1000)
  limit?: number;

  @ValidateIf(present) @IsInt() @Min(0) @Max(10_000_000)
  offset?: number;
}

export class DimensionGroupCount {
  /** The combination: dimension -> value (null when the row has none) */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', nullable: true } })
  values: Record<string, string | null>;
  count: number;
}

export class DatasetDimensionsQueryResponse {
  dataset_id: string;
  version_id: string;
  /** Rows matching the dimension values and filter */
  total: number;
  @ApiProperty({ type: () => [DimensionGroupCount] })
  groups: DimensionGroupCount[];
  /** Matching rows (with `_row_id` and `_dimensions`) */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  items: Array<Record<string, unknown>>;
  limit: number;
  offset: number;
}

export const PARTITION_LEVELS = ['session', 'trace', 'span'] as const;
export type PartitionLevel = (typeof PARTITION_LEVELS)[number];

export class CreatePartitionRequest {
  /** Unique within the version, 1..200 characters */
  @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** What `resolve` lists: `session` (rows grouped by the mapped session_id column; one row, one session without it), or `trace` and `span` for trace datasets */
  @ApiPropertyOptional({ enum: PARTITION_LEVELS, default: 'session' })
  @ValidateIf(present) @IsIn(PARTITION_LEVELS)
  level?: PartitionLevel;

  /** Dimension -> accepted values */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  @ValidateIf(present) @IsObject()
  dimension_values?: Record<string, string[]>;

  /** A filter in the query language */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject()
  filter?: Record<string, unknown>;
}

export class PartitionResponse {
  id: string;
  dataset_id: string;
  version_id: string;
  name: string;
  description: string;
  @ApiProperty({ enum: PARTITION_LEVELS })
  level: PartitionLevel;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  dimension_values: Record<string, string[]>;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  filter: Record<string, unknown> | null;
  /** Rows the partition holds now (dimension assignments may change it) */
  row_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
}

export class ResolvePartitionQuery {
  /** Members per page, 1..1000 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit: number = 100;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(10_000_000)
  offset: number = 0;

  /** Include each member's rows in full (default false: ids only) */
  @IsOptional() @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value)) @IsBoolean()
  include_rows: boolean = false;
}

export class SessionPartition {
  @ApiProperty({ enum: ['session'] })
  level: 'session';
  /** The session id (the mapped session_id column's value, or the row id of a single-row session) */
  session_id: string;
  /** Rows of the session, in dataset order */
  row_ids: string[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } })
  rows?: Array<Record<string, unknown>>;
}

export class TracePartition {
  @ApiProperty({ enum: ['trace'] })
  level: 'trace';
  trace_id: string;
  @ApiProperty({ type: 'string', nullable: true })
  session_id: string | null;
  /** Span rows of the trace, in start order */
  row_ids: string[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } })
  rows?: Array<Record<string, unknown>>;
}

export class SpanPartition {
  @ApiProperty({ enum: ['span'] })
  level: 'span';
  span_id: string;
  trace_id: string;
  row_id: string;
}

export class AvailableMetric {
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged'] })
  kind: 'deterministic' | 'judged';
  description: string;
  /** Whether the version's mapping provides every field the metric reads */
  available: boolean;
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true })
  requires: string[];
  /** Fields the mapping lacks (map them with POST .../map) */
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true })
  missing: string[];
}

export class DatasetVersionAvailableMetricsResponse {
  dataset_id: string;
  version_id: string;
  /** The canonical fields mapped onto columns */
  @ApiProperty({ type: 'object', additionalProperties: true })
  mapping: Record<string, unknown>;
  @ApiProperty({ type: () => [AvailableMetric] })
  metrics: AvailableMetric[];
}

export class PartitionAvailableMetricsResponse extends DatasetVersionAvailableMetricsResponse {
  partition_id: string;
  /** Rows of the partition */
  row_count: number;
}
