import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { MAX_INT32 } from '../../../../libs/common/json-limits.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { IsBoundedJson, NestedObject } from '../../../../libs/common/record-validators.js';
import { METRIC_CONFIG_KINDS, type MetricConfigKind } from '../entities/metric-config.entity.js';
import { ScaleDto } from './judge.dto.js';

const present = (_: object, value: unknown) => value !== undefined;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
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
  @ValidateIf(present) @IsIn(METRIC_CONFIG_KINDS)
  kind?: MetricConfigKind;

  /** Only configs of this metric (e.g. bleu, llm_judge, or a custom op) */
  @IsOptional() @IsString() @MaxLength(100)
  metric?: string;

  /** Names containing this text (case-insensitive) */
  @IsOptional() @IsString() @MaxLength(100)
  q?: string;
}

export class JudgedSpecDto {
  /** The grading prompt; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}}, {{row.<column>}}. Default: the built-in rubric of the metric */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(20_000)
  rubric?: string;

  /** Default numeric 1..5 */
  @ValidateIf(present) @NestedObject(() => ScaleDto)
  scale?: ScaleDto;

  /** Numeric scales: rows pass when the normalised score (0..1) reaches this (default 0.75) */
  @ValidateIf(present) @IsNumber() @Min(0) @Max(1)
  pass_threshold?: number;

  /** Label scales: the labels that pass (default the first label) */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @IsString({ each: true })
  pass_labels?: string[];

  /** The judge that grades; default the eval config's default judge */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID()
  judge_id?: string | null;
}

/** A version's definition; in a new version, what is left out is copied from the version it starts from. */
export class MetricConfigDefinition {
  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** Parameters, checked against the metric's JSON Schema (GET /ops/{metric}/schema) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject() @IsBoundedJson(64_000)
  params?: Record<string, unknown>;

  /** Deterministic and custom metrics: rows pass when the score reaches this (at most this for latency, cost, length); null for none */
  @ApiPropertyOptional({ type: 'number', nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsNumber({ allowNaN: false, allowInfinity: false })
  threshold?: number | null;

  /** Judged metrics: rubric, scale, pass rule, judge */
  @ValidateIf(present) @NestedObject(() => JudgedSpecDto)
  judged?: JudgedSpecDto;
}

export class CreateMetricConfigRequest extends MetricConfigDefinition {
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace (case-insensitive): 1..100 letters, digits or . _ : - */
  @Transform(trim) @IsString() @Matches(CONFIG_NAME_PATTERN, { message: 'name must be 1..100 letters, digits or . _ : - and start with a letter or digit' })
  name: string;

  /** `deterministic` (a built-in metric), `judged` (an LLM judge with a rubric) or `custom` (a registered op of kind metric) */
  @ApiProperty({ enum: METRIC_CONFIG_KINDS })
  @IsIn(METRIC_CONFIG_KINDS)
  kind: MetricConfigKind;

  /** deterministic: exact_match, contains, regex, …; judged: llm_judge or correctness, answer_relevance, faithfulness, context_relevance, helpfulness; custom: the op's name */
  @IsString() @MinLength(1) @MaxLength(100)
  metric: string;
}

export class CreateMetricConfigVersionRequest extends MetricConfigDefinition {
  /** The version to start from (default the newest) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(MAX_INT32)
  from_version?: number;
}

export class UpdateMetricConfigRequest extends MetricConfigDefinition {}

export class JudgedSpecResponse {
  rubric: string;
  scale: ScaleDto;
  @ApiProperty({ type: 'number', nullable: true })
  pass_threshold: number | null;
  @ApiProperty({ type: 'array', items: { type: 'string' }, nullable: true })
  pass_labels: string[] | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  judge_id: string | null;
}

export class MetricConfigResponse {
  id: string;
  workspace_id: string;
  name: string;
  /** 1, 2, … */
  version: number;
  description: string;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS })
  kind: MetricConfigKind;
  metric: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  params: Record<string, unknown>;
  @ApiProperty({ type: 'number', nullable: true })
  threshold: number | null;
  @ApiProperty({ type: () => JudgedSpecResponse, nullable: true })
  judged: JudgedSpecResponse | null;
  /** True once a run used this version: it can no longer be changed or deleted */
  frozen: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  first_used_at: Date | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  first_used_by_run: string | null;
  /** Whether this is the newest version of the name */
  is_latest: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export class MetricConfigSummary {
  name: string;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS })
  kind: MetricConfigKind;
  metric: string;
  /** The newest version's description */
  description: string;
  latest_version: number;
  /** Versions the name has */
  version_count: number;
  /** Versions runs have used (frozen) */
  frozen_versions: number[];
  updated_at: Date;
}
