import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { TAG_PATTERN } from '../../../../libs/common/labelled-record.dto.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { RUN_STATES, type RunState } from '../entities/run.entity.js';
import { NestedObject } from '../../../../libs/common/record-validators.js';

const present = (_: object, value: unknown) => value !== undefined;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class RunSampleDto {
  /** Rows to draw (at most the rows there are) */
  @IsInt() @Min(1) @Max(1_000_000)
  size: number;

  /** The same seed draws the same rows (default 0) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(2_147_483_647)
  seed?: number;
}

export class CreateRunRequest {
  /** The workspace that runs it (members) */
  @IsUUID()
  workspace_id: string;

  @ValidateIf(present) @Transform(trim) @IsString() @MaxLength(200)
  name?: string;

  @IsUUID()
  dataset_id: string;

  /** Default: the dataset's current version, else its newest */
  @ValidateIf(present) @IsUUID()
  version_id?: string;

  /** Only the rows of this partition of the version */
  @ValidateIf(present) @IsUUID()
  partition_id?: string;

  @IsUUID()
  sut_id: string;

  @IsUUID()
  connection_id: string;

  /** The metrics, default judge and pass rule; or name `metrics` */
  @ValidateIf(present) @IsUUID()
  eval_config_id?: string;

  /** Metric names (configs or built-ins), resolved as GET .../metric-configs/resolved says, when there is no eval config */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(100, { each: true })
  metrics?: string[];

  /** The judge for judged metrics that name none */
  @ValidateIf(present) @IsUUID()
  judge_id?: string;

  /** Calls in flight at most (1..256); default and ceiling: the connection's max_concurrency */
  @ValidateIf(present) @IsInt() @Min(1) @Max(256)
  concurrency?: number;

  /** A deterministic sample of the rows */
  @ValidateIf(present) @NestedObject(() => RunSampleDto)
  sample?: RunSampleDto;

  /** Each row is sent this many times (1..10, default 1), e.g. to measure variance */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10)
  repetitions?: number;

  @ValidateIf(present) @IsArray() @ArrayMaxSize(20) @Matches(TAG_PATTERN, { each: true })
  tags?: string[];
}

export const RERUN_MODES = ['all', 'errors', 'failed'] as const;
export class RerunRequest {
  /** `all` rows again, only rows whose call failed (`errors`), or rows that errored or failed the pass rule (`failed`); default all */
  @ApiPropertyOptional({ enum: RERUN_MODES })
  @ValidateIf(present) @IsIn(RERUN_MODES)
  mode?: (typeof RERUN_MODES)[number];
}

export class ListRunsQuery extends PageQueryDto {
  /** Runs of this workspace; without it, of every workspace you belong to */
  @IsOptional() @IsUUID()
  workspace_id?: string;

  @IsOptional() @IsUUID()
  sut_id?: string;

  @IsOptional() @IsUUID()
  dataset_id?: string;

  @ApiPropertyOptional({ enum: RUN_STATES })
  @IsOptional() @IsIn(RUN_STATES)
  state?: RunState;

  @IsOptional() @IsString() @MaxLength(64)
  tag?: string;

  /** Only runs of this project's linked SUTs or datasets (the runs its trend reads) */
  @IsOptional() @IsUUID()
  project_id?: string;
}

export class SutRunsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATES })
  @IsOptional() @IsIn(RUN_STATES)
  state?: RunState;
}

export class EventsQuery {
  /** Only events after this `seq` (poll with the last one you saw) */
  @ApiPropertyOptional({ type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, example: 42 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  after?: number;

  /** 1..1000, default 500 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

export class RunMetricView {
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged', 'custom'] })
  kind: string;
  metric: string;
  /** How it was chosen: eval_config, workspace_default, latest_version, builtin, op_defaults */
  source: string;
  @ApiProperty({ type: 'string', nullable: true })
  config_name: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  config_version: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  threshold: number | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  judge_id: string | null;
  gating: boolean;
  @ApiProperty({ type: 'number', nullable: true })
  min_pass_rate: number | null;
}

export class RunProgressDto {
  total: number;
  /** Items answered by the SUT */
  completed: number;
  /** Items whose call failed */
  errored: number;
  pending: number;
  /** 0..100 */
  percent: number;
}

export class RunResponse {
  id: string;
  workspace_id: string;
  name: string;
  /** queued, running, awaiting_upload (offline), succeeded, failed, cancelled */
  @ApiProperty({ enum: RUN_STATES })
  state: RunState;
  @ApiProperty({ type: 'string', nullable: true })
  state_reason: string | null;
  dataset_id: string;
  version_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  partition_id: string | null;
  sut_id: string;
  connection_id: string;
  /** offline runs wait for PUT /runs/{id}/upload */
  @ApiProperty({ enum: ['http', 'openai_chat', 'offline'] })
  connection_kind: string;
  adapter_revision: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  eval_config_id: string | null;
  @ApiProperty({ type: () => [RunMetricView] })
  metrics: RunMetricView[];
  @ApiProperty({ type: 'object', properties: { row: { type: 'string', enum: ['all', 'any'] }, min_pass_rate: { type: 'number' }, errors_fail: { type: 'boolean' } } })
  pass_rule: { row: 'all' | 'any'; min_pass_rate: number; errors_fail: boolean };
  concurrency: number;
  @ApiProperty({ type: () => RunSampleDto, nullable: true })
  sample: RunSampleDto | null;
  repetitions: number;
  tags: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  rerun_of: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: RERUN_MODES })
  rerun_mode: string | null;
  progress: RunProgressDto;
  /** The verdict under the pass rule once the run succeeded */
  @ApiProperty({ type: 'boolean', nullable: true })
  passed: boolean | null;
  /** Set once the run ended: per metric aggregates, pass rate, latency, cost (GET .../results for breakdowns) */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  summary: Record<string, unknown> | null;
  cancel_requested: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  started_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at: Date | null;
  updated_at: Date;
}

export class RunEventResponse {
  /** Increasing within the run (the service's event counter, so not consecutive): pass the last one as `after` */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, example: 1042 })
  seq: number;
  /** state_changed, progress, row_error, judge_error, upload_received, rerun_started */
  type: string;
  at: Date;
  @ApiProperty({ type: 'object', additionalProperties: true })
  data: Record<string, unknown>;
}
