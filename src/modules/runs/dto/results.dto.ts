import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsObject, Max, Min } from 'class-validator';
import { EXAMPLE_ID, EXAMPLE_OUTPUT, EXAMPLE_ROW, EXAMPLE_TRAJECTORY } from '#libs/common/openapi-examples.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import { SortKeys, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const MAX_RESULTS_LIMIT = 1000;

export class RunResultsQueryRequest {
  /**
   * A filter in the dataset query language (docs/query-language.md) over each result:
   * `row.<column>`, `output`, `status` (done, error, pending), `passed`, `latency_ms`,
   * `cost_usd`, `scores.<metric>.score`, `scores.<metric>.passed`, `error.code`, `session_id`,
   * `turn`, `repetition`, `dimensions.<name>`
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: {
      and: [
        { field: 'passed', op: 'eq', value: false },
        { field: 'dimensions.topic', op: 'eq', value: 'billing' },
      ],
    },
  })
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;

  /** Sort keys over the same fields, first wins; results keep dataset order after them */
  @SortKeys([{ field: 'latency_ms', direction: 'desc' }])
  sort?: Array<Record<string, unknown>>;

  /** 1..1000, default 50 */
  @ApiPropertyOptional({ example: 50 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_RESULTS_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ example: 0 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset?: number;
}

export class RunItemResultDto {
  @ApiProperty({ example: EXAMPLE_ID.rows[0] })
  row_id: string;
  @ApiProperty({ example: 1 })
  repetition: number;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  session_id: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  turn: number | null;
  /** pending (not called yet), done (answered), error (the call failed) */
  @ApiProperty({ enum: ['pending', 'done', 'error'], example: 'done' })
  status: string;
  /** The dataset row as the run saw it */
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_ROW })
  row: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_OUTPUT })
  output: string | null;
  @ApiProperty({ type: 'number', nullable: true, example: 1040 })
  latency_ms: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 },
  })
  usage: Record<string, unknown> | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.00041 })
  cost_usd: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { sources: ['kb/security/reset-password'] },
  })
  extras: Record<string, unknown> | null;
  @ApiProperty({
    type: 'object',
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    nullable: true,
    example: null,
  })
  error: { code: string; message: string } | null;
  /** What the agent did: the tool calls and steps its answer (or its trace) showed; null when none was read */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: EXAMPLE_TRAJECTORY })
  trajectory: Trajectory | null;
  /** The W3C trace id the call carried, when the run linked it to the SUT's own trace */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  trace_id: string | null;
  /** metric -> {score, passed, normalized, label, reason, detail, error} */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      'answer-correctness': {
        score: 5,
        normalized: 1,
        passed: true,
        label: null,
        reason: 'Same steps as the reference, and adds the expiry.',
      },
      latency: { score: 1040, passed: true },
    },
  })
  scores: Record<string, unknown>;
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  passed: boolean | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { topic: 'account_access' } })
  dimensions: Record<string, string>;
}

export class RunResultsQueryResponse {
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  @ApiProperty({ type: () => [RunItemResultDto] })
  items: RunItemResultDto[];
  @ApiProperty({ example: 15 })
  total: number;
  @ApiProperty({ example: 50 })
  limit: number;
  @ApiProperty({ example: 0 })
  offset: number;
}

export class RunSessionTurnDto extends RunItemResultDto {}

export class RunSessionResponse {
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  @ApiProperty({ example: 'conv-0193' })
  session_id: string;
  /** Turns in order (every repetition of the conversation, repetition then turn) */
  @ApiProperty({ type: () => [RunSessionTurnDto] })
  turns: RunSessionTurnDto[];
  /** True when every turn with a verdict passed; null when none has one */
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  passed: boolean | null;
}
