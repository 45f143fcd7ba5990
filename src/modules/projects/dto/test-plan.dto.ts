import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { catalogueEntryRequest } from '../../catalogues/dto/catalogue-entry.dto.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'The bar a support-bot release must clear';
const EXAMPLE_MESSAGE = 'Billing answers must reach 0.9';
const EXAMPLE_METRICS = [
  {
    name: EXAMPLE_NAME.metricConfig,
    threshold: { operator: '>=', value: 0.8 },
    per_dimension: [{ dimension: 'topic', value: 'billing', threshold: { operator: '>=', value: 0.9 } }],
    gating: true,
  },
  { name: 'latency', threshold: { operator: '<=', value: 2500 }, gating: false },
];
const EXAMPLE_RELEASE_RULE = { mode: 'all_metrics', include_dimension_thresholds: true, min_row_pass_rate: 0.9 };

const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const METRIC = /^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/;
export const MAX_PLAN_DATASETS = 50;
export const MAX_PLAN_METRICS = 50;

export class ListTestPlansQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  /** Plans whose name contains this text (case-insensitive) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
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
  @ApiProperty({ enum: ['>=', '<='], example: '>=' })
  @IsIn(['>=', '<='])
  operator: '>=' | '<=';

  @ApiProperty({ example: 0.8 })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-1e12)
  @Max(1e12)
  value: number;
}

export class DimensionThresholdDto {
  /** A dimension name (snake_case) */
  @ApiProperty({ example: 'topic' })
  @IsString()
  @MaxLength(64)
  @Matches(KEY, { message: 'dimension must be lower-case snake_case' })
  dimension: string;

  /** One of the dimension's values */
  @ApiProperty({ example: 'billing' })
  @IsString()
  @MaxLength(64)
  @Matches(KEY, { message: 'value must be lower-case snake_case' })
  value: string;

  @NestedObject(() => ThresholdDto)
  threshold: ThresholdDto;
}

/** The judge of a judged metric must be validated against human labels (POST /runs/{run_id}/judge-validations) for the run's config version. */
@ApiSchemaExample({ min_kappa_lower: 0.6, on_failure: 'fail' })
export class PlanValidationDto {
  /** The lower bound of the validation's kappa interval must reach this (-1..1) */
  @ApiPropertyOptional({ example: 0.6 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-1)
  @Max(1)
  min_kappa_lower?: number;

  /** The lower bounds of both the true positive and the true negative rate intervals must reach this (0..1) */
  @ApiPropertyOptional({ example: 0.8 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  min_rates_lower?: number;

  /** `fail`: an unvalidated or poorly validated judge fails the gate; `warn`: a warning */
  @ApiProperty({ enum: ['fail', 'warn'], example: 'fail' })
  @IsIn(['fail', 'warn'])
  on_failure: 'fail' | 'warn';
}

export class PlanMetricDto {
  /** The metric as runs name it (`exact_match`, a metric config name, `faithfulness`, …) */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  @IsString()
  @MaxLength(100)
  @Matches(METRIC, { message: 'name must be 1..100 letters, digits, spaces or . _ : -' })
  name: string;

  @NestedObject(() => ThresholdDto)
  threshold: ThresholdDto;

  /** Thresholds for the rows of one dimension value (at most 100) */
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(100)
  @NestedObject(() => DimensionThresholdDto, { each: true })
  per_dimension?: DimensionThresholdDto[];

  /** Counts toward the release rule (default true); false: reported only */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  gating?: boolean;

  /** Judged metrics: the gate requires the judge's validation against human labels */
  @ValidateIfPresent()
  @NestedObject(() => PlanValidationDto)
  validation?: PlanValidationDto;
}

export class PlanDatasetDto {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  @IsUUID()
  dataset_id: string;

  /** Pin a version of the dataset (default: its current, else latest, version when a run starts) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.version })
  @ValidateIfPresent()
  @IsUUID()
  version_id?: string;

  /** Run only a partition of the dataset (one of its versions' partitions) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.partition })
  @ValidateIfPresent()
  @IsUUID()
  partition_id?: string;
}

@ApiSchemaExample(EXAMPLE_RELEASE_RULE)
export class ReleaseRuleDto {
  /** `all_metrics` (default): every gating metric meets its threshold; `min_metrics_passing`: at least `min_metrics_passing` do */
  @ApiPropertyOptional({ enum: ['all_metrics', 'min_metrics_passing'], example: 'all_metrics' })
  @ValidateIfPresent()
  @IsIn(['all_metrics', 'min_metrics_passing'])
  mode?: 'all_metrics' | 'min_metrics_passing';

  /** Required with mode `min_metrics_passing`; at most the number of gating metrics */
  @ApiPropertyOptional({ example: 2 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_PLAN_METRICS)
  min_metrics_passing?: number;

  /** Per-dimension thresholds must hold too (default true) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  include_dimension_thresholds?: boolean;

  /** The run's row pass rate must reach this share, 0..1 (default: no such rule) */
  @ApiPropertyOptional({ example: 0.9 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0)
  @Max(1)
  min_row_pass_rate?: number;
}

/** What a test plan version defines. */
export class TestPlanDefinitionRequest {
  /** Datasets (optionally a pinned version or a partition) the plan runs on (1..50) */
  @ApiPropertyOptional({ maxItems: MAX_PLAN_DATASETS })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PLAN_DATASETS)
  @NestedObject(() => PlanDatasetDto, { each: true })
  datasets?: PlanDatasetDto[];

  /** Metrics with their thresholds (1..50, unique names) */
  @ApiPropertyOptional({ maxItems: MAX_PLAN_METRICS })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PLAN_METRICS)
  @NestedObject(() => PlanMetricDto, { each: true })
  metrics?: PlanMetricDto[];

  /** When a release passes (default: every gating metric meets its threshold) */
  @ValidateIfPresent()
  @NestedObject(() => ReleaseRuleDto)
  release_rule?: ReleaseRuleDto;

  /** What this version is about */
  @ApiPropertyOptional({ example: EXAMPLE_MESSAGE })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.testPlan,
  description: EXAMPLE_DESCRIPTION,
  datasets: [{ dataset_id: EXAMPLE_ID.dataset, version_id: EXAMPLE_ID.version }],
  metrics: EXAMPLE_METRICS,
  release_rule: EXAMPLE_RELEASE_RULE,
  message: 'First plan for the May release',
})
export class CreateTestPlanRequest extends catalogueEntryRequest({
  creator: 'member',
  name: EXAMPLE_NAME.testPlan,
  description: EXAMPLE_DESCRIPTION,
}) {
  /** Datasets (optionally a pinned version or a partition) the plan runs on (1..50) */
  @ApiProperty({ maxItems: MAX_PLAN_DATASETS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PLAN_DATASETS)
  @NestedObject(() => PlanDatasetDto, { each: true })
  datasets: PlanDatasetDto[];

  /** Metrics with their thresholds (1..50, unique names) */
  @ApiProperty({ maxItems: MAX_PLAN_METRICS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PLAN_METRICS)
  @NestedObject(() => PlanMetricDto, { each: true })
  metrics: PlanMetricDto[];

  /** When a release passes (default: every gating metric meets its threshold) */
  @ValidateIfPresent()
  @NestedObject(() => ReleaseRuleDto)
  release_rule?: ReleaseRuleDto;

  /** What version 1 is about */
  @ApiPropertyOptional({ example: 'First plan for the May release' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

@ApiSchemaExample({ from_version: 2, metrics: EXAMPLE_METRICS, message: EXAMPLE_MESSAGE })
export class CreateTestPlanVersionRequest extends TestPlanDefinitionRequest {
  /** The version to start from (default the latest); what the body leaves out is copied from it */
  @ApiPropertyOptional({ example: 2 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  from_version?: number;

  /** A new description of the plan */
  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export class ThresholdResponse {
  @ApiProperty({ enum: ['>=', '<='], example: '>=' })
  operator: '>=' | '<=';
  @ApiProperty({ example: 0.8 })
  value: number;
}

export class DimensionThresholdResponse {
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ example: 'billing' })
  value: string;
  threshold: ThresholdResponse;
}

export class PlanValidationResponse {
  @ApiProperty({ type: 'number', nullable: true, example: 0.6 })
  min_kappa_lower: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  min_rates_lower: number | null;
  @ApiProperty({ enum: ['fail', 'warn'], example: 'fail' })
  on_failure: 'fail' | 'warn';
}

export class PlanMetricResponse {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  threshold: ThresholdResponse;
  @ApiProperty({ type: [DimensionThresholdResponse] })
  per_dimension: DimensionThresholdResponse[];
  @ApiProperty({ example: true })
  gating: boolean;
  /** Present when the gate requires the judge's validation */
  @ApiPropertyOptional({ type: () => PlanValidationResponse })
  validation?: PlanValidationResponse;
}

export class PlanDatasetResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.dataset })
  dataset_id: string;
  /** A pinned version, or null for the dataset's current (else latest) version */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.version })
  version_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  partition_id: string | null;
}

export class ReleaseRuleResponse {
  @ApiProperty({ enum: ['all_metrics', 'min_metrics_passing'], example: 'all_metrics' })
  mode: 'all_metrics' | 'min_metrics_passing';
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  min_metrics_passing: number | null;
  @ApiProperty({ example: true })
  include_dimension_thresholds: boolean;
  @ApiProperty({ type: 'number', nullable: true, example: 0.9 })
  min_row_pass_rate: number | null;
}

/** A test plan version as created. */
export class TestPlanResponse {
  /** The plan's id */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlan })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  /** This version's number */
  @ApiProperty({ example: 3 })
  version: number;
  /** The plan's newest version */
  @ApiProperty({ example: 3 })
  latest_version: number;
  /** This version's id */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlanVersion })
  version_id: string;
  @ApiProperty({ example: EXAMPLE_MESSAGE })
  message: string;
  @ApiProperty({ type: [PlanDatasetResponse] })
  datasets: PlanDatasetResponse[];
  @ApiProperty({ type: [PlanMetricResponse] })
  metrics: PlanMetricResponse[];
  release_rule: ReleaseRuleResponse;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  /** When this version was created */
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class TestPlanProjectRef {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.project })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.project })
  name: string;
  /** The plan version the project carries */
  @ApiProperty({ example: 3 })
  version: number;
}

/** A test plan version with the projects that carry the plan. */
export class TestPlanDetailResponse extends TestPlanResponse {
  /** Whether this is the plan's newest version */
  @ApiProperty({ example: true })
  is_latest: boolean;
  /** Projects of the workspace carrying any version of this plan */
  @ApiProperty({ type: [TestPlanProjectRef] })
  projects: TestPlanProjectRef[];
}

export class TestPlanSummaryResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlan })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ example: 3 })
  latest_version: number;
  /** Metrics of the latest version */
  @ApiProperty({ example: 2 })
  metric_count: number;
  /** Datasets of the latest version */
  @ApiProperty({ example: 1 })
  dataset_count: number;
  /** Projects carrying the plan */
  @ApiProperty({ example: 1 })
  project_count: number;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class TestPlanVersionSummary {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlanVersion })
  version_id: string;
  @ApiProperty({ example: 3 })
  version: number;
  @ApiProperty({ example: EXAMPLE_MESSAGE })
  message: string;
  @ApiProperty({ example: 2 })
  metric_count: number;
  @ApiProperty({ example: 1 })
  dataset_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

/** A page of a test plan's versions, newest first. */
export class TestPlanVersionPage {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlan })
  test_plan_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  name: string;
  @ApiProperty({ example: 3 })
  latest_version: number;
  @ApiProperty({ type: [TestPlanVersionSummary] })
  items: TestPlanVersionSummary[];
  @ApiProperty({ example: 3 })
  total: number;
  @ApiProperty({ example: 1 })
  page: number;
  @ApiProperty({ example: 50 })
  page_size: number;
}
