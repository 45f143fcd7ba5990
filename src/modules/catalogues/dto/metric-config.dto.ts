import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { IsBoundedJson, NestedObject } from '#libs/common/record-validators.js';
import { METRIC_CONFIG_KINDS, type MetricConfigKind } from '../entities/metric-config.entity.js';
import { EXAMPLE_RUBRIC, ScaleDto } from './judge.dto.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Correctness against the reviewed answer, graded 1 to 5';
const EXAMPLE_JUDGED = {
  rubric: EXAMPLE_RUBRIC,
  scale: { type: 'numeric', min: 1, max: 5 },
  pass_threshold: 0.75,
  judge_id: EXAMPLE_ID.judge,
};

export const CONFIG_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

export class WorkspaceQuery {
  /** The workspace the config belongs to */
  @IsUUID()
  workspace_id: string;
}

export class ListMetricConfigsQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ enum: METRIC_CONFIG_KINDS })
  @ValidateIfPresent()
  @IsIn(METRIC_CONFIG_KINDS)
  kind?: MetricConfigKind;

  /** Only configs of this metric (e.g. bleu, llm_judge, or a custom op) */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  metric?: string;

  /** Names containing this text (case-insensitive) */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  q?: string;
}

export class JudgedSpecDto {
  /** The grading prompt; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}}, {{row.<column>}}. Default: the built-in rubric of the metric */
  @ApiPropertyOptional({ example: EXAMPLE_RUBRIC })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(20_000)
  rubric?: string;

  /** Default numeric 1..5 */
  @ValidateIfPresent()
  @NestedObject(() => ScaleDto)
  scale?: ScaleDto;

  /** Numeric scales: rows pass when the normalised score (0..1) reaches this (default 0.75) */
  @ApiPropertyOptional({ example: 0.75 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0)
  @Max(1)
  pass_threshold?: number;

  /** Label scales: the labels that pass (default the first label) */
  @ApiPropertyOptional({ example: ['correct'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  pass_labels?: string[];

  /** The judge that grades; default the eval config's default judge */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsUUID()
  judge_id?: string | null;
}

/** A version's definition; in a new version, what is left out is copied from the version it starts from. */
export class MetricConfigDefinition {
  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Parameters, checked against the metric's JSON Schema (GET /ops/{metric}/schema) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { case_sensitive: false } })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(64_000)
  params?: Record<string, unknown>;

  /** Deterministic and custom metrics: rows pass when the score reaches this (at most this for latency, cost, length); null for none */
  @ApiPropertyOptional({ type: 'number', nullable: true, example: 0.6 })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  threshold?: number | null;

  /** Judged metrics: rubric, scale, pass rule, judge */
  @ValidateIfPresent()
  @NestedObject(() => JudgedSpecDto)
  judged?: JudgedSpecDto;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.metricConfig,
  kind: 'judged',
  metric: 'correctness',
  description: EXAMPLE_DESCRIPTION,
  judged: EXAMPLE_JUDGED,
})
export class CreateMetricConfigRequest extends MetricConfigDefinition {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace (case-insensitive): 1..100 letters, digits or . _ : - */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(CONFIG_NAME_PATTERN, {
    message: 'name must be 1..100 letters, digits or . _ : - and start with a letter or digit',
  })
  name: string;

  /** `deterministic` (a built-in metric), `judged` (an LLM judge with a rubric) or `custom` (a registered op of kind metric) */
  @ApiProperty({ enum: METRIC_CONFIG_KINDS, example: 'judged' })
  @IsIn(METRIC_CONFIG_KINDS)
  kind: MetricConfigKind;

  /** deterministic: exact_match, contains, regex, …; judged: llm_judge or correctness, answer_relevance, faithfulness, context_relevance, helpfulness; custom: the op's name */
  @ApiProperty({ example: 'correctness' })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  metric: string;
}

@ApiSchemaExample({ from_version: 2, description: 'Stricter: passes from 4 of 5', judged: { pass_threshold: 0.8 } })
export class CreateMetricConfigVersionRequest extends MetricConfigDefinition {
  /** The version to start from (default the newest) */
  @ApiPropertyOptional({ example: 2 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  from_version?: number;
}

@ApiSchemaExample({ description: EXAMPLE_DESCRIPTION, judged: EXAMPLE_JUDGED })
export class UpdateMetricConfigRequest extends MetricConfigDefinition {}

export class JudgedSpecResponse {
  @ApiProperty({ example: EXAMPLE_RUBRIC })
  rubric: string;
  scale: ScaleDto;
  @ApiProperty({ type: 'number', nullable: true, example: 0.75 })
  pass_threshold: number | null;
  @ApiProperty({ type: 'array', items: { type: 'string' }, nullable: true, example: null })
  pass_labels: string[] | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  judge_id: string | null;
}

export class MetricConfigResponse {
  @ApiProperty({ example: EXAMPLE_ID.metricConfig })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  /** 1, 2, … */
  @ApiProperty({ example: 2 })
  version: number;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS, example: 'judged' })
  kind: MetricConfigKind;
  @ApiProperty({ example: 'correctness' })
  metric: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: {} })
  params: Record<string, unknown>;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  threshold: number | null;
  @ApiProperty({ type: () => JudgedSpecResponse, nullable: true })
  judged: JudgedSpecResponse | null;
  /** True once a run used this version: it can no longer be changed or deleted */
  @ApiProperty({ example: true })
  frozen: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.started })
  first_used_at: Date | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.baseRun })
  first_used_by_run: string | null;
  /** Whether this is the newest version of the name */
  @ApiProperty({ example: true })
  is_latest: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class MetricConfigSummary {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS, example: 'judged' })
  kind: MetricConfigKind;
  @ApiProperty({ example: 'correctness' })
  metric: string;
  /** The newest version's description */
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ example: 2 })
  latest_version: number;
  /** Versions the name has */
  @ApiProperty({ example: 2 })
  version_count: number;
  /** Versions runs have used (frozen) */
  @ApiProperty({ example: [1, 2] })
  frozen_versions: number[];
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
