import { ApiProperty, ApiPropertyOptional, IntersectionType, OmitType } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { catalogueEntryRequest } from './catalogue-entry.dto.js';
import { CONFIG_NAME_PATTERN } from './metric-config.dto.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'What a release of support-bot-v2 must pass';
const EvalConfigEntry = catalogueEntryRequest({
  creator: 'member',
  name: EXAMPLE_NAME.evalConfig,
  description: EXAMPLE_DESCRIPTION,
});
const EXAMPLE_METRICS = [
  { config_name: EXAMPLE_NAME.metricConfig, config_version: 2, min_pass_rate: 0.9 },
  { config_name: 'faithfulness' },
  { config_name: 'latency', threshold: 2500, gating: false },
];

export class ListEvalConfigsQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  /** Names containing this text (case-insensitive) */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  q?: string;
}

export class EvalMetricRefDto {
  /** A metric config of the workspace, or a built-in metric name (scored with its defaults) */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  @MaxLength(100)
  @Matches(CONFIG_NAME_PATTERN)
  config_name: string;

  /** Pin a version; left out or null takes the version in force when a run starts (GET .../metric-configs/resolved) */
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_INT32, example: 2 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  config_version?: number | null;

  /** Overrides the config's row pass threshold (deterministic and custom metrics) */
  @ApiPropertyOptional({ type: 'number', nullable: true, example: 0.6 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  threshold?: number | null;

  /** The run fails when fewer rows than this share (0..1) pass this metric */
  @ApiPropertyOptional({ type: 'number', nullable: true, minimum: 0, maximum: 1, example: 0.9 })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  min_pass_rate?: number | null;

  /** Counts toward the row verdict (default true); false reports the metric only */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  gating?: boolean;
}

export class PassRuleDto {
  /** A row passes when `all` its gating metrics pass (default) or when `any` does */
  @ApiPropertyOptional({ enum: ['all', 'any'], example: 'all' })
  @ValidateIfPresent()
  @IsIn(['all', 'any'])
  row?: 'all' | 'any';

  /** The run passes when at least this share of rows pass (default 1) and each metric meets its min_pass_rate */
  @ApiPropertyOptional({ example: 0.9 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0)
  @Max(1)
  min_pass_rate?: number;

  /** Rows whose SUT call failed count as failed (default true) or are left out of the rate */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  errors_fail?: boolean;
}

class EvalConfigFields {
  /** 1..50 metrics, each named once */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @NestedObject(() => EvalMetricRefDto, { each: true })
  metrics: EvalMetricRefDto[];

  /** The judge for judged metrics whose config names none */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  @IsOptional()
  @IsUUID()
  default_judge_id?: string | null;

  @ValidateIfPresent()
  @NestedObject(() => PassRuleDto)
  pass_rule?: PassRuleDto;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.evalConfig,
  description: EXAMPLE_DESCRIPTION,
  metrics: EXAMPLE_METRICS,
  default_judge_id: EXAMPLE_ID.judge,
  pass_rule: { row: 'all', min_pass_rate: 0.9, errors_fail: true },
})
export class CreateEvalConfigRequest extends IntersectionType(EvalConfigEntry, EvalConfigFields) {}

/** Replaces the eval config as a whole. */
@ApiSchemaExample({
  name: EXAMPLE_NAME.evalConfig,
  description: EXAMPLE_DESCRIPTION,
  metrics: EXAMPLE_METRICS,
  default_judge_id: EXAMPLE_ID.judge,
  pass_rule: { row: 'all', min_pass_rate: 0.95, errors_fail: true },
})
export class ReplaceEvalConfigRequest extends IntersectionType(
  OmitType(EvalConfigEntry, ['workspace_id'] as const),
  EvalConfigFields,
) {}

export class EvalMetricRefResponse {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  config_name: string;
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  config_version: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  threshold: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.9 })
  min_pass_rate: number | null;
  @ApiProperty({ example: true })
  gating: boolean;
}

export class PassRuleResponse {
  @ApiProperty({ enum: ['all', 'any'], example: 'all' })
  row: 'all' | 'any';
  @ApiProperty({ example: 0.9 })
  min_pass_rate: number;
  @ApiProperty({ example: true })
  errors_fail: boolean;
}

export class EvalConfigResponse {
  @ApiProperty({ example: EXAMPLE_ID.evalConfig })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.evalConfig })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ type: () => [EvalMetricRefResponse] })
  metrics: EvalMetricRefResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  default_judge_id: string | null;
  pass_rule: PassRuleResponse;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
