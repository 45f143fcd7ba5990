import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { QUALITY_CHECKS } from '../checks/quality-checks.js';

export class QualityCheckParamDto {
  @ApiProperty({ enum: ['number', 'string', 'boolean', 'string[]'], example: 'number' })
  type: string;
  @ApiProperty({
    description: 'Default value',
    nullable: true,
    oneOf: [{ type: 'number' }, { type: 'string' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }],
    example: 0.85,
  })
  default: unknown;
  @ApiProperty({ example: 'Jaccard similarity at or above which two texts are near duplicates' })
  description: string;
}

export class SelectableCheck {
  /** Check id, e.g. `near_duplicates` */
  @ApiProperty({ example: 'near_duplicates' })
  id: string;
  @ApiProperty({ example: 'Near duplicates' })
  name: string;
  @ApiProperty({ example: 'Rows whose text is nearly the same' })
  description: string;
  /** Whether the check applies to this version's columns and mapping */
  @ApiProperty({ example: true })
  applicable: boolean;
  /** Why it applies or not */
  @ApiProperty({ example: 'compares the text of "question"' })
  reason: string;
  /** Columns the check would read */
  @ApiProperty({ example: ['question'] })
  columns: string[];
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(QualityCheckParamDto) } })
  params: Record<string, QualityCheckParamDto>;
}

export class DatasetSelectableChecksResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ type: () => [SelectableCheck] })
  checks: SelectableCheck[];
}

export class AvailableChecksQuery {
  /** The version the checks would run on; default: the current version, else the newest */
  @IsOptional()
  @IsUUID()
  version_id?: string;
}

export class RunQualityChecksRequest {
  /** Checks to run, each `{ "check": id, "params": {...} }`; default: every applicable check with default params */
  @ApiPropertyOptional({
    type: 'array',
    // A check may be named twice, with other params; validateSelection names an unknown one (400).
    maxItems: QUALITY_CHECKS.length * 2,
    items: {
      type: 'object',
      properties: {
        check: { type: 'string', enum: QUALITY_CHECKS.map((c) => c.id) },
        params: { type: 'object', additionalProperties: true },
      },
      required: ['check'],
    },
    example: [{ check: 'pii' }, { check: 'near_duplicates', params: { threshold: 0.9 } }],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(QUALITY_CHECKS.length * 2)
  checks?: unknown[];
}

export class QualityFindingDto {
  /** Rows the finding is about */
  @ApiProperty({ example: [EXAMPLE_ID.rows[0], EXAMPLE_ID.rows[2]] })
  row_ids: string[];
  @ApiPropertyOptional({ example: 'question' })
  column?: string;
  @ApiProperty({ example: 'Near duplicates (similarity 0.91)' })
  message: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { similarity: 0.91 } })
  detail?: Record<string, unknown>;
}

export class QualityCheckResultDto {
  @ApiProperty({ example: 'near_duplicates' })
  check: string;
  @ApiProperty({ enum: ['pass', 'warn', 'fail', 'skipped'], example: 'warn' })
  status: 'pass' | 'warn' | 'fail' | 'skipped';
  @ApiProperty({ example: '2 rows are near duplicates of another' })
  summary: string;
  @ApiProperty({ example: 2 })
  affected_rows: number;
  /** affected_rows / rows checked */
  @ApiProperty({ example: 0.0093 })
  affected_ratio: number;
  @ApiProperty({ type: () => [QualityFindingDto] })
  findings: QualityFindingDto[];
}

export class DatasetQualityVerdictResponse {
  /** The data-operation run that produced the verdict */
  @ApiProperty({ example: EXAMPLE_ID.qualityRun })
  run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: 3 })
  version_number: number;
  /** fail when any check failed, else warn when any warned, else pass */
  @ApiProperty({ enum: ['pass', 'warn', 'fail'], example: 'warn' })
  verdict: 'pass' | 'warn' | 'fail';
  @ApiProperty({ example: 214 })
  rows_checked: number;
  @ApiProperty({ type: () => [QualityCheckResultDto] })
  checks: QualityCheckResultDto[];
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class DataOperationRunResponse {
  @ApiProperty({ example: EXAMPLE_ID.qualityRun })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  /** `quality_checks` */
  @ApiProperty({ example: 'quality_checks' })
  kind: string;
  @ApiProperty({ enum: ['running', 'succeeded', 'failed'], example: 'succeeded' })
  state: 'running' | 'succeeded' | 'failed';
  /** The checks and params asked for */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { checks: [{ check: 'pii' }, { check: 'near_duplicates', params: { threshold: 0.9 } }] },
  })
  params: Record<string, unknown>;
  @ApiProperty({ enum: ['pass', 'warn', 'fail'], nullable: true, example: 'warn' })
  verdict: 'pass' | 'warn' | 'fail' | null;
  /** The verdict in full (when succeeded) */
  @ApiProperty({ type: () => DatasetQualityVerdictResponse, nullable: true })
  result: DatasetQualityVerdictResponse | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  error: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  finished_at: Date | null;
}

export class ListOperationRunsQuery extends PageQueryDto {}

export class CheckSuggestionsQuery {
  /** The dataset to suggest checks for */
  @IsUUID()
  dataset_id: string;

  /** Its version; default: the current version, else the newest */
  @IsOptional()
  @IsUUID()
  version_id?: string;
}

export class CheckSuggestion {
  @ApiProperty({ example: 'near_duplicates' })
  check: string;
  /** Why this check suits the schema */
  @ApiProperty({ example: '"question" holds free text, where paraphrased copies creep in' })
  reason: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { threshold: 0.85 } })
  params: Record<string, unknown>;
}

export class SuggestionResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ type: () => [CheckSuggestion] })
  suggestions: CheckSuggestion[];
}
