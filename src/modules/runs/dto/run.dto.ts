import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { TAG_PATTERN } from '#libs/common/labelled-record.dto.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { RUN_STATES, type RunState } from '../entities/run.entity.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent, Trim } from '#libs/common/dto-decorators.js';
import { TargetMappingDto } from '../../traces/dto/span-mapping.dto.js';
import { GATE_LABEL_PATTERN, GATE_LABEL_RULE, GATE_VERDICTS, type GateVerdict } from './gate-verdict.dto.js';

export const RECORDED_LEVELS = ['trace', 'session'] as const;

@ApiSchemaExample({ level: 'trace', mapping: { output: { pick: 'last_root', field: 'output' } } })
export class RecordedTracesDto {
  /** Each trace (default) or each session of the trace dataset version is a row */
  @ApiPropertyOptional({ enum: RECORDED_LEVELS, example: 'trace' })
  @ValidateIfPresent()
  @IsIn(RECORDED_LEVELS)
  level?: (typeof RECORDED_LEVELS)[number];

  /** Where input, output, context, expected output and tool calls are read from the spans (as online evaluators read them) */
  @ValidateIfPresent()
  @NestedObject(() => TargetMappingDto)
  mapping?: TargetMappingDto;
}

export class RunSampleDto {
  /** Rows to draw (at most the rows there are) */
  @ApiProperty({ example: 100 })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  size: number;

  /** The same seed draws the same rows (default 0) */
  @ApiPropertyOptional({ example: 7 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.run,
  dataset_id: EXAMPLE_ID.dataset,
  version_id: EXAMPLE_ID.version,
  sut_id: EXAMPLE_ID.sut,
  connection_id: EXAMPLE_ID.connection,
  eval_config_id: EXAMPLE_ID.evalConfig,
  concurrency: 8,
  repetitions: 1,
  tags: ['nightly', 'release-candidate'],
})
export class CreateRunRequest {
  /** The workspace that runs it (members) */
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ example: EXAMPLE_NAME.run })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiProperty({ example: EXAMPLE_ID.dataset })
  @IsUUID()
  dataset_id: string;

  /** Default: the dataset's current version, else its newest */
  @ApiPropertyOptional({ example: EXAMPLE_ID.version })
  @ValidateIfPresent()
  @IsUUID()
  version_id?: string;

  /** Only the rows of this partition of the version */
  @ApiPropertyOptional({ example: EXAMPLE_ID.partition })
  @ValidateIfPresent()
  @IsUUID()
  partition_id?: string;

  @ApiProperty({ example: EXAMPLE_ID.sut })
  @IsUUID()
  sut_id: string;

  @ApiProperty({ example: EXAMPLE_ID.connection })
  @IsUUID()
  connection_id: string;

  /** The metrics, default judge and pass rule; or name `metrics` */
  @ApiPropertyOptional({ example: EXAMPLE_ID.evalConfig })
  @ValidateIfPresent()
  @IsUUID()
  eval_config_id?: string;

  /** Metric names (configs or built-ins), resolved as GET .../metric-configs/resolved says, when there is no eval config */
  @ApiPropertyOptional({ example: ['answer-correctness', 'faithfulness', 'latency'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  metrics?: string[];

  /** The judge for judged metrics that name none */
  @ApiPropertyOptional({ example: EXAMPLE_ID.judge })
  @ValidateIfPresent()
  @IsUUID()
  judge_id?: string;

  /** Calls in flight at most (1..256); default and ceiling: the connection's max_concurrency */
  @ApiPropertyOptional({ example: 8 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(256)
  concurrency?: number;

  /** A deterministic sample of the rows */
  @ValidateIfPresent()
  @NestedObject(() => RunSampleDto)
  sample?: RunSampleDto;

  /** Each row is sent this many times (1..10, default 1), e.g. to measure variance */
  @ApiPropertyOptional({ example: 1 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10)
  repetitions?: number;

  @ApiPropertyOptional({ example: ['nightly', 'release-candidate'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @MaxLength(64, { each: true })
  @Matches(TAG_PATTERN, { each: true })
  tags?: string[];

  /** Score recorded traces instead of calling anything: `dataset_id` is a trace dataset and the connection is offline (docs/agents.md) */
  @ValidateIfPresent()
  @NestedObject(() => RecordedTracesDto)
  traces?: RecordedTracesDto;
}

export const RERUN_MODES = ['all', 'errors', 'failed'] as const;
export class RerunRequest {
  /** `all` rows again, only rows whose call failed (`errors`), or rows that errored or failed the pass rule (`failed`); default all */
  @ApiPropertyOptional({ enum: RERUN_MODES, example: 'errors' })
  @ValidateIfPresent()
  @IsIn(RERUN_MODES)
  mode?: (typeof RERUN_MODES)[number];
}

export class ListRunsQuery extends PageQueryDto {
  /** Runs of this workspace; without it, of every workspace you belong to */
  @IsOptional()
  @IsUUID()
  workspace_id?: string;

  @IsOptional()
  @IsUUID()
  sut_id?: string;

  @IsOptional()
  @IsUUID()
  dataset_id?: string;

  @ApiPropertyOptional({ enum: RUN_STATES })
  @IsOptional()
  @IsIn(RUN_STATES)
  state?: RunState;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  tag?: string;

  /** Only runs of this project's linked SUTs or datasets (the runs its trend reads) */
  @IsOptional()
  @IsUUID()
  project_id?: string;

  /** Only runs whose newest recorded gate verdict (of `gate_label`, when given) is this: with `pass`, the first is the last good run (`--baseline latest`) */
  @ApiPropertyOptional({ enum: GATE_VERDICTS })
  @IsOptional()
  @IsIn(GATE_VERDICTS)
  gate_verdict?: GateVerdict;

  /** Only runs with a gate verdict recorded with this label (a branch such as `main`) */
  @ApiPropertyOptional({ example: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(GATE_LABEL_PATTERN, { message: GATE_LABEL_RULE })
  gate_label?: string;
}

export class SutRunsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATES })
  @IsOptional()
  @IsIn(RUN_STATES)
  state?: RunState;
}

export class EventsQuery {
  /** Only events after this `seq` (poll with the last one you saw) */
  @ApiPropertyOptional({ type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, example: 42 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  after?: number;

  /** 1..1000, default 500 */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

/** The live stream's cursor: only `after` (a `Last-Event-ID` header, which an EventSource sends when it reconnects, wins over it). */
export class EventStreamQuery extends PickType(EventsQuery, ['after'] as const) {}

export class RunMetricView {
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged', 'custom'], example: 'judged' })
  kind: string;
  @ApiProperty({ example: 'correctness' })
  metric: string;
  /** How it was chosen: eval_config, workspace_default, latest_version, builtin, op_defaults */
  @ApiProperty({ example: 'eval_config' })
  source: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.metricConfig })
  config_name: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  config_version: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  threshold: number | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  judge_id: string | null;
  @ApiProperty({ example: true })
  gating: boolean;
  @ApiProperty({ type: 'number', nullable: true, example: 0.9 })
  min_pass_rate: number | null;
}

export class RunProgressDto {
  @ApiProperty({ example: 214 })
  total: number;
  /** Items answered by the SUT */
  @ApiProperty({ example: 212 })
  completed: number;
  /** Items whose call failed */
  @ApiProperty({ example: 2 })
  errored: number;
  @ApiProperty({ example: 0 })
  pending: number;
  /** 0..100 */
  @ApiProperty({ example: 100 })
  percent: number;
}

export class RunResponse {
  @ApiProperty({ example: EXAMPLE_ID.run })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.run })
  name: string;
  /** queued, running, awaiting_upload (offline), succeeded, failed, cancelled */
  @ApiProperty({ enum: RUN_STATES, example: 'succeeded' })
  state: RunState;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  state_reason: string | null;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.partition })
  partition_id: string | null;
  @ApiProperty({ example: EXAMPLE_ID.sut })
  sut_id: string;
  @ApiProperty({ example: EXAMPLE_ID.connection })
  connection_id: string;
  /** offline runs wait for PUT /runs/{id}/upload */
  @ApiProperty({ enum: ['http', 'openai_chat', 'offline'], example: 'http' })
  connection_kind: string;
  @ApiProperty({ example: 2 })
  adapter_revision: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.evalConfig })
  eval_config_id: string | null;
  @ApiProperty({ type: () => [RunMetricView] })
  metrics: RunMetricView[];
  @ApiProperty({
    type: 'object',
    properties: {
      row: { type: 'string', enum: ['all', 'any'] },
      min_pass_rate: { type: 'number' },
      errors_fail: { type: 'boolean' },
    },
    example: { row: 'all', min_pass_rate: 0.9, errors_fail: true },
  })
  pass_rule: { row: 'all' | 'any'; min_pass_rate: number; errors_fail: boolean };
  @ApiProperty({ example: 8 })
  concurrency: number;
  @ApiProperty({ type: () => RunSampleDto, nullable: true })
  sample: RunSampleDto | null;
  @ApiProperty({ example: 1 })
  repetitions: number;
  @ApiProperty({ example: ['nightly', 'release-candidate'] })
  tags: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  rerun_of: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: RERUN_MODES })
  rerun_mode: string | null;
  progress: RunProgressDto;
  /** The verdict under the pass rule once the run succeeded */
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  passed: boolean | null;
  /** Set once the run ended: per metric aggregates, pass rate, latency, cost (GET .../results for breakdowns) */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: {
      rows: 214,
      completed: 212,
      errored: 2,
      passed_rows: 199,
      failed_rows: 15,
      pass_rate: 0.93,
      passed: true,
      reasons: [],
      latency_ms: { mean: 1180, p50: 1040, p90: 1890, p99: 2710 },
      cost_usd_total: 0.84,
    },
  })
  summary: Record<string, unknown> | null;
  @ApiProperty({ example: false })
  cancel_requested: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.job })
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.started })
  started_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  finished_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class RunEventResponse {
  /** Increasing within the run (the service's event counter, so not consecutive): pass the last one as `after` */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, example: 1042 })
  seq: number;
  /** state_changed, progress, row_error, judge_error, upload_received, rerun_started */
  @ApiProperty({ example: 'state_changed' })
  type: string;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  at: Date;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { from: 'running', to: 'succeeded', reason: null, passed: true, pass_rate: 0.93 },
  })
  data: Record<string, unknown>;
}
