import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
  IsNumber,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { ApiSchemaExample, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { JOB_STATE_VOCABULARY } from '#libs/queue/tracked-job.js';
import { TrackedRunProperty } from '#libs/queue/dto/tracked-run.dto.js';
import { EXAMPLE_QUEUE_ID } from './review.dto.js';

/** Finally labelled items a judge run grades at most: the first ones, in queue order. */
export const MAX_JUDGE_RUN_ITEMS = 2000;
/** Items the judge could not grade that a judge run lists (it counts them all). */
export const MAX_JUDGE_RUN_ERRORS = 20;
/** A stable example id of a judge run and of the validation it records. */
export const EXAMPLE_JUDGE_RUN_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a61';
const EXAMPLE_VALIDATION_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a62';

/** The judged metric config version whose judge grades the items. */
export class JudgeRunMetricConfigDto {
  /** The metric config's name */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  /** Its version; absent: the version in force (the workspace default's pin for that name, else the newest version) */
  @ApiPropertyOptional({ type: 'integer', example: 2 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(999_999_999)
  version?: number;
}

@ApiSchemaExample({ metric_config: { name: EXAMPLE_NAME.metricConfig }, field: 'correct', seed: 7 })
export class StartReviewJudgeRunRequest {
  @ApiProperty({ type: () => JudgeRunMetricConfigDto })
  @NestedObject(() => JudgeRunMetricConfigDto)
  metric_config: JudgeRunMetricConfigDto;

  /** The rubric field whose final labels are the human verdicts: pass/fail, categorical (with `positive`) or numeric */
  @ApiProperty({ example: 'correct' })
  @IsString()
  @MaxLength(64)
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'field must be a rubric field name' })
  field: string;

  /**
   * The values meaning pass, compared as text case-insensitively (at most 50): required for a
   * categorical field (some of its options); for a numeric field, the scores that pass (without
   * it, a score passes when its place on the field's scale reaches the judge's pass threshold)
   */
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', maxLength: 200 }, example: ['warm', 'neutral'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  positive?: string[];

  /** Confidence level of the validation's intervals, 0.5..0.999 (default 0.95) */
  @ApiPropertyOptional({ example: 0.95 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0.5)
  @Max(0.999)
  confidence?: number;

  /** Seed of the validation's bootstrap intervals (default 1) */
  @ApiPropertyOptional({ type: 'integer', example: 7 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;
}

/** An item the judge could not grade. */
export class JudgeRunItemError {
  @ApiProperty({ format: 'uuid', example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52' })
  item_id: string;
  /** The judge call's failure: `timeout`, `http_error`, `malformed_response`, … */
  @ApiProperty({ example: 'http_error' })
  code: string;
  @ApiProperty({ example: 'the judge answered 503' })
  message: string;
}

/** Why a judge run failed or was cancelled. */
export class JudgeRunFailure {
  /** `no_final_labels`, `judge_unreachable`, `too_few_pairs`, `judge_gone`, `starter_not_member`, `cancelled`, … */
  @ApiProperty({ example: 'too_few_pairs' })
  code: string;
  @ApiProperty({ example: '4 items have both a judge verdict and a final label; a validation needs at least 10' })
  message: string;
}

/** A judge applied to a queue's finally labelled items, as a tracked job; poll it until it ends. */
export class ReviewJudgeRunResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_JUDGE_RUN_ID })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_QUEUE_ID })
  queue_id: string;
  /** The judged metric config version applied */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.metricConfig })
  metric_config_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  config_name: string;
  @ApiProperty({ type: 'integer', example: 2 })
  config_version: number;
  /** The rubric field whose final labels are the human verdicts */
  @ApiProperty({ example: 'correct' })
  field: string;
  /** The queue's rubric version when the run was asked for */
  @ApiProperty({ type: 'integer', example: 1 })
  rubric_version: number;
  @ApiProperty({ type: 'array', items: { type: 'string' }, nullable: true, example: null })
  positive: string[] | null;
  @ApiProperty({ example: 0.95 })
  confidence: number;
  @ApiProperty({ type: 'integer', example: 7 })
  seed: number;
  @TrackedRunProperty.state(JOB_STATE_VOCABULARY)
  state: string;
  @ApiProperty({ type: () => JudgeRunFailure, nullable: true, example: null })
  failure: JudgeRunFailure | null;
  /** `{done, total}` items graded so far, while it runs */
  @TrackedRunProperty.progress()
  progress: Record<string, unknown> | null;
  /** Finally labelled items taken (at most 2,000, the first in queue order) */
  @ApiProperty({ type: 'integer', example: 48 })
  items: number;
  /** Items the judge gave a verdict on */
  @ApiProperty({ type: 'integer', example: 46 })
  graded: number;
  /** Items the judge could not grade (its call failed or its answer held no verdict) */
  @ApiProperty({ type: 'integer', example: 2 })
  ungraded: number;
  /** Items whose final label has no value of the field (an optional field left empty) */
  @ApiProperty({ type: 'integer', example: 0 })
  unlabelled: number;
  /** The first 20 items the judge could not grade */
  @ApiProperty({ type: [JudgeRunItemError], example: [] })
  errors: JudgeRunItemError[];
  /** The judge validation recorded, once succeeded (GET /judge-validations/{validation_id}) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_VALIDATION_ID })
  validation_id: string | null;
  @TrackedRunProperty.jobId()
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @TrackedRunProperty.createdAt()
  created_at: Date;
  @TrackedRunProperty.startedAt()
  started_at: Date | null;
  @TrackedRunProperty.finishedAt()
  finished_at: Date | null;
}
