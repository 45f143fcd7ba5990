import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
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
import { METRIC_CONFIG_KINDS, type MetricConfigKind } from '../entities/metric-config.entity.js';
import { CONFIG_NAME_PATTERN } from './metric-config.dto.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class MetricDefaultEntryDto {
  /** The metric being pinned: a built-in metric (bleu, correctness…), a custom metric op, or a metric config name */
  @ApiProperty({ example: 'correctness' })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  metric_name: string;

  /** The config in force for it; null clears the pin (back to the newest version or the built-in defaults) */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.metricConfig })
  @ValidateIf((_, v) => v !== null)
  @MaxLength(100)
  @Matches(CONFIG_NAME_PATTERN)
  config_name: string | null;

  /** A version to pin; left out or null follows the config's newest version */
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_INT32, example: 2 })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  config_version?: number | null;

  /** Why (kept in the history) */
  @ApiPropertyOptional({ example: 'Pin version 2 for the May release' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  note?: string;
}

export class SetMetricDefaultsRequest {
  /** 1..50 pins, one per metric */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @NestedObject(() => MetricDefaultEntryDto, { each: true })
  defaults: MetricDefaultEntryDto[];
}

export class WorkspaceMetricConfigDefault {
  @ApiProperty({ example: 'correctness' })
  metric_name: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.metricConfig })
  config_name: string | null;
  /** null: follows the config's newest version */
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  config_version: number | null;
  /** 1, 2, … per metric */
  @ApiProperty({ example: 3 })
  revision: number;
  @ApiProperty({ example: 'Pin version 2 for the May release' })
  note: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  set_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  set_at: Date;
}

export class WorkspaceMetricConfigDefaultListResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The pins in force (cleared ones are left out; their history keeps them) */
  @ApiProperty({ type: () => [WorkspaceMetricConfigDefault] })
  items: WorkspaceMetricConfigDefault[];
  @ApiProperty({ example: 1 })
  total: number;
}

export class WorkspaceMetricConfigDefaultVersionsResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'correctness' })
  metric_name: string;
  /** Newest first; the first is in force */
  @ApiProperty({ type: () => [WorkspaceMetricConfigDefault] })
  items: WorkspaceMetricConfigDefault[];
  @ApiProperty({ example: 3 })
  total: number;
}

export const RESOLUTION_SOURCES = [
  'eval_config',
  'workspace_default',
  'latest_version',
  'builtin',
  'op_defaults',
] as const;
export type ResolutionSource = (typeof RESOLUTION_SOURCES)[number];

export class ResolveMetricConfigsQuery {
  /** Resolve as a run with this eval config would */
  @IsOptional()
  @IsUUID()
  eval_config_id?: string;

  /** Only this metric */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  metric?: string;
}

export class MetricConfigResolution {
  /** The metric as runs and eval configs name it */
  @ApiProperty({ example: 'correctness' })
  metric_name: string;
  /** What decided: the eval config's pin, the workspace default, the config's newest version, the built-in defaults, or a custom op's empty parameters */
  @ApiProperty({ enum: RESOLUTION_SOURCES, example: 'workspace_default' })
  source: ResolutionSource;
  /** Why, in a sentence */
  @ApiProperty({ example: 'The workspace pins answer-correctness version 2 for correctness' })
  reason: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.metricConfig })
  config_name: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  config_version: number | null;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS, example: 'judged' })
  kind: MetricConfigKind;
  /** The metric computed (a built-in metric, llm_judge, or a custom op) */
  @ApiProperty({ example: 'correctness' })
  metric: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: {} })
  params: Record<string, unknown>;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  threshold: number | null;
}

export class MetricConfigResolutionListResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.evalConfig })
  eval_config_id: string | null;
  @ApiProperty({ type: () => [MetricConfigResolution] })
  items: MetricConfigResolution[];
}
