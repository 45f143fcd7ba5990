import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsArray, IsOptional, IsUUID, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

export class QualityCheckParamDto {
  @ApiProperty({ enum: ['number', 'string', 'boolean', 'string[]'] })
  type: string;
  @ApiProperty({ description: 'Default value', nullable: true, oneOf: [{ type: 'number' }, { type: 'string' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }] })
  default: unknown;
  description: string;
}

export class SelectableCheck {
  /** Check id, e.g. `near_duplicates` */
  id: string;
  name: string;
  description: string;
  /** Whether the check applies to this version's columns and mapping */
  applicable: boolean;
  /** Why it applies or not */
  reason: string;
  /** Columns the check would read */
  columns: string[];
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(QualityCheckParamDto) } })
  params: Record<string, QualityCheckParamDto>;
}

export class DatasetSelectableChecksResponse {
  dataset_id: string;
  version_id: string;
  @ApiProperty({ type: () => [SelectableCheck] })
  checks: SelectableCheck[];
}

export class AvailableChecksQuery {
  /** The version the checks would run on; default: the current version, else the newest */
  @IsOptional() @IsUUID()
  version_id?: string;
}

export class RunQualityChecksRequest {
  /** Checks to run, each `{ "check": id, "params": {...} }`; default: every applicable check with default params */
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { check: { type: 'string' }, params: { type: 'object', additionalProperties: true } }, required: ['check'] }, example: [{ check: 'pii' }, { check: 'near_duplicates', params: { threshold: 0.9 } }] })
  @ValidateIf(present) @IsArray()
  checks?: unknown[];
}

export class QualityFindingDto {
  /** Rows the finding is about */
  row_ids: string[];
  @ApiPropertyOptional()
  column?: string;
  message: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  detail?: Record<string, unknown>;
}

export class QualityCheckResultDto {
  check: string;
  @ApiProperty({ enum: ['pass', 'warn', 'fail', 'skipped'] })
  status: 'pass' | 'warn' | 'fail' | 'skipped';
  summary: string;
  affected_rows: number;
  /** affected_rows / rows checked */
  affected_ratio: number;
  @ApiProperty({ type: () => [QualityFindingDto] })
  findings: QualityFindingDto[];
}

export class DatasetQualityVerdictResponse {
  /** The data-operation run that produced the verdict */
  run_id: string;
  dataset_id: string;
  version_id: string;
  version_number: number;
  /** fail when any check failed, else warn when any warned, else pass */
  @ApiProperty({ enum: ['pass', 'warn', 'fail'] })
  verdict: 'pass' | 'warn' | 'fail';
  rows_checked: number;
  @ApiProperty({ type: () => [QualityCheckResultDto] })
  checks: QualityCheckResultDto[];
  created_at: Date;
}

export class DataOperationRunResponse {
  id: string;
  dataset_id: string;
  version_id: string;
  /** `quality_checks` */
  kind: string;
  @ApiProperty({ enum: ['running', 'succeeded', 'failed'] })
  state: 'running' | 'succeeded' | 'failed';
  /** The checks and params asked for */
  @ApiProperty({ type: 'object', additionalProperties: true })
  params: Record<string, unknown>;
  @ApiProperty({ enum: ['pass', 'warn', 'fail'], nullable: true })
  verdict: 'pass' | 'warn' | 'fail' | null;
  /** The verdict in full (when succeeded) */
  @ApiProperty({ type: () => DatasetQualityVerdictResponse, nullable: true })
  result: DatasetQualityVerdictResponse | null;
  @ApiProperty({ type: 'string', nullable: true })
  error: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at: Date | null;
}

export class ListOperationRunsQuery extends PageQueryDto {}

export class CheckSuggestionsQuery {
  /** The dataset to suggest checks for */
  @IsUUID()
  dataset_id: string;

  /** Its version; default: the current version, else the newest */
  @IsOptional() @IsUUID()
  version_id?: string;
}

export class CheckSuggestion {
  check: string;
  /** Why this check suits the schema */
  reason: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  params: Record<string, unknown>;
}

export class SuggestionResponse {
  dataset_id: string;
  version_id: string;
  @ApiProperty({ type: () => [CheckSuggestion] })
  suggestions: CheckSuggestion[];
}
