import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { EXAMPLE_ID, EXAMPLE_TRACE } from '#libs/common/openapi-examples.js';

/* A landed trace read back as a tree, a page at a time: the children of a span, or the spans down to a depth. */

/** Bounds of the span tree reads (docs/traces.md, "Large traces"). */
export const SPAN_TREE_LIMITS = {
  /** Spans a page holds at most */
  pageSize: 1000,
  defaultPageSize: 200,
  /** The deepest level a read by depth reaches */
  maxDepth: 1000,
  idLength: 128,
  cursorLength: 1024,
} as const;

/** What both span tree reads take: the trace, the page size and where the last page ended. */
class SpanTreePageQuery {
  /** The trace (as landed: OTLP hex ids lower-cased) */
  @ApiProperty({ minLength: 1, maxLength: SPAN_TREE_LIMITS.idLength, example: EXAMPLE_TRACE.trace })
  @IsString()
  @MinLength(1)
  @MaxLength(SPAN_TREE_LIMITS.idLength)
  trace_id: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: SPAN_TREE_LIMITS.pageSize,
    default: SPAN_TREE_LIMITS.defaultPageSize,
  })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SPAN_TREE_LIMITS.pageSize)
  limit: number = SPAN_TREE_LIMITS.defaultPageSize;

  /** `next_cursor` of the previous page of the same read */
  @ApiPropertyOptional({ maxLength: SPAN_TREE_LIMITS.cursorLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(SPAN_TREE_LIMITS.cursorLength)
  cursor?: string;
}

export class SpanChildrenQuery extends SpanTreePageQuery {
  /** The span whose children are read; without it, the trace's roots (spans without a parent, or whose parent is not in the trace) */
  @ApiPropertyOptional({ minLength: 1, maxLength: SPAN_TREE_LIMITS.idLength, example: EXAMPLE_TRACE.span })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(SPAN_TREE_LIMITS.idLength)
  parent_span_id?: string;
}

export class SpansByDepthQuery extends SpanTreePageQuery {
  /** The deepest level answered: 1 is the roots, 2 their children ... */
  @ApiProperty({ minimum: 1, maximum: SPAN_TREE_LIMITS.maxDepth, example: 2 })
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SPAN_TREE_LIMITS.maxDepth)
  max_depth: number;
}

export class SpanTreeItem {
  /** The landed span: the canonical fields of docs/traces.md and its kept `attributes` */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { trace_id: EXAMPLE_TRACE.trace, span_id: EXAMPLE_TRACE.span, name: 'support-agent', kind: 'agent' },
  })
  span: Record<string, unknown>;
  /** Spans directly under this one: read them with `parent_span_id` set to its `span_id` */
  @ApiProperty({ example: 3 })
  child_count: number;
  /** Its level, 1 for a root (null in a read of children) */
  @ApiProperty({ type: 'integer', nullable: true, example: 1 })
  depth: number | null;
}

export class SpanTreePage {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.traceVersion })
  version_id: string;
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  trace_id: string;
  /** Children in start order (then span id); by depth: level by level, each in start order */
  @ApiProperty({ type: [SpanTreeItem] })
  items: SpanTreeItem[];
  /** Pass as `cursor` for the next page; null on the last page. Versions do not change, so pages stay stable. */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  next_cursor: string | null;
}
