import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsString, IsUUID, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { MAX_INT32 } from '../../../../libs/common/json-limits.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { CreateCatalogueEntryRequest } from '../../catalogues/dto/catalogue-entry.dto.js';
import { NestedObject } from '../../../../libs/common/record-validators.js';

const present = (_: object, value: unknown) => value !== undefined;
const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const METRIC = /^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/;
export const MAX_PLAN_DATASETS = 50;
export const MAX_PLAN_METRICS = 50;

export class ListTestPlansQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  /** Plans whose name contains this text (case-insensitive) */
  @ValidateIf(present) @IsString() @MaxLength(100)
  q?: string;
}

export class TestPlanWorkspaceQuery {
  /** The workspace the plan belongs to ({ref} may be a name, unique only in its workspace) */
  @IsUUID()
  workspace_id: string;
}

export class ListTestPlanVersionsQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;
}

export class ThresholdDto {
  /** `>=`: the mean score must be at least `value`; `<=`: at most (latency, cost) */
  @ApiProperty({ enum: ['>=', '<='] })
  @IsIn(['>=', '<='])
  operator: '>=' | '<=';

  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-1e12) @Max(1e12)
  value: number;
}

export class DimensionThresholdDto {
  /** A dimension name (snake_case) */
  @IsString() @Matches(KEY, { message: 'dimension must be lower-case snake_case' })
  dimension: string;

  /** One of the dimension's values */
  @IsString() @Matches(KEY, { message: 'value must be lower-case snake_case' })
  value: string;

  @NestedObject(() => ThresholdDto)
  threshold: ThresholdDto;
}

export class PlanMetricDto {
  /** The metric as runs name it (`exact_match`, a metric config name, `faithfulness`, …) */
  @IsString() @Matches(METRIC, { message: 'name must be 1..100 letters, digits, spaces or . _ : -' })
  name: string;

  @NestedObject(() => ThresholdDto)
  threshold: ThresholdDto;

  /** Thresholds for the rows of one dimension value (at most 100) */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(100) @NestedObject(() => DimensionThresholdDto, { each: true })
  per_dimension?: DimensionThresholdDto[];

  /** Counts toward the release rule (default true); false: reported only */
  @ValidateIf(present) @IsBoolean()
  gating?: boolean;
}

export class PlanDatasetDto {
  @IsUUID()
  dataset_id: string;

  /** Pin a version of the dataset (default: its current, else latest, version when a run starts) */
  @ValidateIf(present) @IsUUID()
  version_id?: string;

  /** Run only a partition of the dataset (one of its versions' partitions) */
  @ValidateIf(present) @IsUUID()
  partition_id?: string;
}

export class ReleaseRuleDto {
  /** `all_metrics` (default): every gating metric meets its threshold; `min_metrics_passing`: at least `min_metrics_passing` do */
  @ApiPropertyOptional({ enum: ['all_metrics', 'min_metrics_passing'] })
  @ValidateIf(present) @IsIn(['all_metrics', 'min_metrics_passing'])
  mode?: 'all_metrics' | 'min_metrics_passing';

  /** Required with mode `min_metrics_passing`; at most the number of gating metrics */
  @ValidateIf(present) @IsInt() @Min(1) @Max(MAX_PLAN_METRICS)
  min_metrics_passing?: number;

  /** Per-dimension thresholds must hold too (default true) */
  @ValidateIf(present) @IsBoolean()
  include_dimension_thresholds?: boolean;

  /** The run's row pass rate must reach this share, 0..1 (default: no such rule) */
  @ValidateIf(present) @IsNumber() @Min(0) @Max(1)
  min_row_pass_rate?: number;
}

/** What a test plan version defines. */
export class TestPlanDefinitionRequest {
  /** Datasets (optionally a pinned version or a partition) the plan runs on (1..50) */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PLAN_DATASETS) @NestedObject(() => PlanDatasetDto, { each: true })
  datasets?: PlanDatasetDto[];

  /** Metrics with their thresholds (1..50, unique names) */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PLAN_METRICS) @NestedObject(() => PlanMetricDto, { each: true })
  metrics?: PlanMetricDto[];

  /** When a release passes (default: every gating metric meets its threshold) */
  @ValidateIf(present) @NestedObject(() => ReleaseRuleDto)
  release_rule?: ReleaseRuleDto;

  /** What this version is about */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

export class CreateTestPlanRequest extends CreateCatalogueEntryRequest {
  /** Datasets (optionally a pinned version or a partition) the plan runs on (1..50) */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PLAN_DATASETS) @NestedObject(() => PlanDatasetDto, { each: true })
  datasets: PlanDatasetDto[];

  /** Metrics with their thresholds (1..50, unique names) */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PLAN_METRICS) @NestedObject(() => PlanMetricDto, { each: true })
  metrics: PlanMetricDto[];

  /** When a release passes (default: every gating metric meets its threshold) */
  @ValidateIf(present) @NestedObject(() => ReleaseRuleDto)
  release_rule?: ReleaseRuleDto;

  /** What version 1 is about */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

export class CreateTestPlanVersionRequest extends TestPlanDefinitionRequest {
  /** The version to start from (default the latest); what the body leaves out is copied from it */
  @ValidateIf(present) @IsInt() @Min(1) @Max(MAX_INT32)
  from_version?: number;

  /** A new description of the plan */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;
}

export class ThresholdResponse {
  @ApiProperty({ enum: ['>=', '<='] })
  operator: '>=' | '<=';
  value: number;
}

export class DimensionThresholdResponse {
  dimension: string;
  value: string;
  threshold: ThresholdResponse;
}

export class PlanMetricResponse {
  name: string;
  threshold: ThresholdResponse;
  @ApiProperty({ type: [DimensionThresholdResponse] })
  per_dimension: DimensionThresholdResponse[];
  gating: boolean;
}

export class PlanDatasetResponse {
  @ApiProperty({ format: 'uuid' })
  dataset_id: string;
  /** A pinned version, or null for the dataset's current (else latest) version */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  version_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  partition_id: string | null;
}

export class ReleaseRuleResponse {
  @ApiProperty({ enum: ['all_metrics', 'min_metrics_passing'] })
  mode: 'all_metrics' | 'min_metrics_passing';
  @ApiProperty({ type: 'integer', nullable: true })
  min_metrics_passing: number | null;
  include_dimension_thresholds: boolean;
  @ApiProperty({ type: 'number', nullable: true })
  min_row_pass_rate: number | null;
}

/** A test plan version as created. */
export class TestPlanResponse {
  /** The plan's id */
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  workspace_id: string;
  name: string;
  description: string;
  /** This version's number */
  version: number;
  /** The plan's newest version */
  latest_version: number;
  /** This version's id */
  @ApiProperty({ format: 'uuid' })
  version_id: string;
  message: string;
  @ApiProperty({ type: [PlanDatasetResponse] })
  datasets: PlanDatasetResponse[];
  @ApiProperty({ type: [PlanMetricResponse] })
  metrics: PlanMetricResponse[];
  release_rule: ReleaseRuleResponse;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  /** When this version was created */
  created_at: Date;
}

export class TestPlanProjectRef {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  /** The plan version the project carries */
  version: number;
}

/** A test plan version with the projects that carry the plan. */
export class TestPlanDetailResponse extends TestPlanResponse {
  /** Whether this is the plan's newest version */
  is_latest: boolean;
  /** Projects of the workspace carrying any version of this plan */
  @ApiProperty({ type: [TestPlanProjectRef] })
  projects: TestPlanProjectRef[];
}

export class TestPlanSummaryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  workspace_id: string;
  name: string;
  description: string;
  latest_version: number;
  /** Metrics of the latest version */
  metric_count: number;
  /** Datasets of the latest version */
  dataset_count: number;
  /** Projects carrying the plan */
  project_count: number;
  created_at: Date;
  updated_at: Date;
}

export class TestPlanVersionSummary {
  @ApiProperty({ format: 'uuid' })
  version_id: string;
  version: number;
  message: string;
  metric_count: number;
  dataset_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
}

/** A page of a test plan's versions, newest first. */
export class TestPlanVersionPage {
  @ApiProperty({ format: 'uuid' })
  test_plan_id: string;
  name: string;
  latest_version: number;
  @ApiProperty({ type: [TestPlanVersionSummary] })
  items: TestPlanVersionSummary[];
  total: number;
  page: number;
  page_size: number;
}
