import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { MAX_INT32 } from '../../../../libs/common/json-limits.js';
import { METRIC_CONFIG_KINDS, type MetricConfigKind } from '../entities/metric-config.entity.js';
import { CONFIG_NAME_PATTERN } from './metric-config.dto.js';
import { NestedObject } from '../../../../libs/common/record-validators.js';

const present = (_: object, value: unknown) => value !== undefined;

export class MetricDefaultEntryDto {
  /** The metric being pinned: a built-in metric (bleu, correctness…), a custom metric op, or a metric config name */
  @IsString() @MinLength(1) @MaxLength(100)
  metric_name: string;

  /** The config in force for it; null clears the pin (back to the newest version or the built-in defaults) */
  @ApiProperty({ type: 'string', nullable: true })
  @ValidateIf((_, v) => v !== null) @Matches(CONFIG_NAME_PATTERN)
  config_name: string | null;

  /** A version to pin; left out or null follows the config's newest version */
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_INT32 })
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsInt() @Min(1) @Max(MAX_INT32)
  config_version?: number | null;

  /** Why (kept in the history) */
  @ValidateIf(present) @IsString() @MaxLength(500)
  note?: string;
}

export class SetMetricDefaultsRequest {
  /** 1..50 pins, one per metric */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(50) @NestedObject(() => MetricDefaultEntryDto, { each: true })
  defaults: MetricDefaultEntryDto[];
}

export class WorkspaceMetricConfigDefault {
  metric_name: string;
  @ApiProperty({ type: 'string', nullable: true })
  config_name: string | null;
  /** null: follows the config's newest version */
  @ApiProperty({ type: 'integer', nullable: true })
  config_version: number | null;
  /** 1, 2, … per metric */
  revision: number;
  note: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  set_by: string | null;
  set_at: Date;
}

export class WorkspaceMetricConfigDefaultListResponse {
  workspace_id: string;
  /** The pins in force (cleared ones are left out; their history keeps them) */
  @ApiProperty({ type: () => [WorkspaceMetricConfigDefault] })
  items: WorkspaceMetricConfigDefault[];
  total: number;
}

export class WorkspaceMetricConfigDefaultVersionsResponse {
  workspace_id: string;
  metric_name: string;
  /** Newest first; the first is in force */
  @ApiProperty({ type: () => [WorkspaceMetricConfigDefault] })
  items: WorkspaceMetricConfigDefault[];
  total: number;
}

export const RESOLUTION_SOURCES = ['eval_config', 'workspace_default', 'latest_version', 'builtin', 'op_defaults'] as const;
export type ResolutionSource = (typeof RESOLUTION_SOURCES)[number];

export class ResolveMetricConfigsQuery {
  /** Resolve as a run with this eval config would */
  @IsOptional() @IsUUID()
  eval_config_id?: string;

  /** Only this metric */
  @IsOptional() @IsString() @MaxLength(100)
  metric?: string;
}

export class MetricConfigResolution {
  /** The metric as runs and eval configs name it */
  metric_name: string;
  /** What decided: the eval config's pin, the workspace default, the config's newest version, the built-in defaults, or a custom op's empty parameters */
  @ApiProperty({ enum: RESOLUTION_SOURCES })
  source: ResolutionSource;
  /** Why, in a sentence */
  reason: string;
  @ApiProperty({ type: 'string', nullable: true })
  config_name: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  config_version: number | null;
  @ApiProperty({ enum: METRIC_CONFIG_KINDS })
  kind: MetricConfigKind;
  /** The metric computed (a built-in metric, llm_judge, or a custom op) */
  metric: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  params: Record<string, unknown>;
  @ApiProperty({ type: 'number', nullable: true })
  threshold: number | null;
}

export class MetricConfigResolutionListResponse {
  workspace_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  eval_config_id: string | null;
  @ApiProperty({ type: () => [MetricConfigResolution] })
  items: MetricConfigResolution[];
}
