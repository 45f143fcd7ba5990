import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsInt, IsObject, Max, Min, ValidateIf } from 'class-validator';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

export const MAX_RESULTS_LIMIT = 1000;

export class RunResultsQueryRequest {
  /**
   * A filter in the dataset query language (docs/query-language.md) over each result:
   * `row.<column>`, `output`, `status` (done, error, pending), `passed`, `latency_ms`,
   * `cost_usd`, `scores.<metric>.score`, `scores.<metric>.passed`, `error.code`, `session_id`,
   * `turn`, `repetition`, `dimensions.<name>`
   */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { and: [{ field: 'passed', op: 'eq', value: false }, { field: 'scores.bleu.score', op: 'lt', value: 0.3 }] } })
  @ValidateIf(present) @IsObject()
  filter?: Record<string, unknown>;

  /** Sort keys over the same fields, first wins; results keep dataset order after them */
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, direction: { type: 'string', enum: ['asc', 'desc'] } }, required: ['field'] } })
  @ValidateIf(present) @IsArray()
  sort?: Array<Record<string, unknown>>;

  /** 1..1000, default 50 */
  @ValidateIf(present) @IsInt() @Min(1) @Max(MAX_RESULTS_LIMIT)
  limit?: number;

  @ValidateIf(present) @IsInt() @Min(0) @Max(10_000_000)
  offset?: number;
}

export class RunItemResultDto {
  row_id: string;
  repetition: number;
  @ApiProperty({ type: 'string', nullable: true })
  session_id: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  turn: number | null;
  /** pending (not called yet), done (answered), error (the call failed) */
  @ApiProperty({ enum: ['pending', 'done', 'error'] })
  status: string;
  /** The dataset row as the run saw it */
  @ApiProperty({ type: 'object', additionalProperties: true })
  row: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true })
  output: string | null;
  @ApiProperty({ type: 'number', nullable: true })
  latency_ms: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  usage: Record<string, unknown> | null;
  @ApiProperty({ type: 'number', nullable: true })
  cost_usd: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  extras: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, nullable: true })
  error: { code: string; message: string } | null;
  /** metric -> {score, passed, normalized, label, reason, detail, error} */
  @ApiProperty({ type: 'object', additionalProperties: true })
  scores: Record<string, unknown>;
  @ApiProperty({ type: 'boolean', nullable: true })
  passed: boolean | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  dimensions: Record<string, string>;
}

export class RunResultsQueryResponse {
  run_id: string;
  @ApiProperty({ type: () => [RunItemResultDto] })
  items: RunItemResultDto[];
  total: number;
  limit: number;
  offset: number;
}

export class RunSessionTurnDto extends RunItemResultDto {}

export class RunSessionResponse {
  run_id: string;
  session_id: string;
  /** Turns in order (every repetition of the conversation, repetition then turn) */
  @ApiProperty({ type: () => [RunSessionTurnDto] })
  turns: RunSessionTurnDto[];
  /** True when every turn with a verdict passed; null when none has one */
  @ApiProperty({ type: 'boolean', nullable: true })
  passed: boolean | null;
}
