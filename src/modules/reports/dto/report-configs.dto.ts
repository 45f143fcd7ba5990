import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, IsUUID, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { NestedObject } from '../../../../libs/common/record-validators.js';
import { REPORT_FORMATS, SECTION_KEYS, type ReportFormat, type SectionKey } from '../../../../libs/reports/report.types.js';

const present = (_: object, value: unknown) => value !== undefined;
const presentOrNull = (_: object, value: unknown) => value !== undefined && value !== null;

export const MAX_PROMPT = 20_000;
export const MAX_QUESTIONS = 20;

export class WorkspaceQuery {
  /** The workspace */
  @IsUUID()
  workspace_id: string;
}

export class ReportConfigSectionDto {
  /** A built-in section */
  @ApiProperty({ enum: SECTION_KEYS })
  @IsIn(SECTION_KEYS)
  key: SectionKey;

  /** Its title in reports (default: the built-in title) */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(200)
  title?: string;

  /** Questions the section should answer beside the built-in ones (up to 20, each up to 500 characters) */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(MAX_QUESTIONS) @IsString({ each: true }) @MinLength(1, { each: true }) @MaxLength(500, { each: true })
  questions?: string[];
}

export class CreateReportConfigRequest {
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace (case-insensitive), 1..100 characters */
  @IsString() @Matches(/\S/, { message: 'name must not be blank' }) @MaxLength(100)
  name: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** The sections, in report order (1..6, each key once) */
  @ApiProperty({ type: () => [ReportConfigSectionDto] })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(SECTION_KEYS.length) @NestedObject(() => ReportConfigSectionDto, { each: true })
  sections: ReportConfigSectionDto[];
}

export class ReportConfigSectionResponse {
  @ApiProperty({ enum: SECTION_KEYS })
  key: string;
  title: string;
  /** The config's extra questions */
  questions: string[];
}

export class ReportConfigSummary {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  /** Section keys in report order */
  section_keys: string[];
  /** The workspace settings name this config as the default */
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

export class ReportConfigResponse extends ReportConfigSummary {
  @ApiProperty({ type: () => [ReportConfigSectionResponse] })
  sections: ReportConfigSectionResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
}

export class UpdateReportSettingsRequest {
  @IsUUID()
  workspace_id: string;

  /** The config new reports use when the request names none (null: every built-in section) */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true })
  @ValidateIf(presentOrNull) @IsUUID()
  default_config_id?: string | null;

  /** The judge that writes narratives (null: the deterministic template) */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true })
  @ValidateIf(presentOrNull) @IsUUID()
  judge_id?: string | null;

  /** Formats exports and downloads may use (1..3) */
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...REPORT_FORMATS] } })
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(REPORT_FORMATS.length) @IsIn(REPORT_FORMATS, { each: true })
  formats?: ReportFormat[];

  /** The format of exports and downloads that name none; one of formats */
  @ApiPropertyOptional({ enum: REPORT_FORMATS })
  @ValidateIf(present) @IsIn(REPORT_FORMATS)
  default_format?: ReportFormat;
}

export class ReportSettingsResponse {
  workspace_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  default_config_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  judge_id: string | null;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...REPORT_FORMATS] } })
  formats: string[];
  @ApiProperty({ enum: REPORT_FORMATS })
  default_format: string;
  /** Sections whose prompt the workspace replaced */
  custom_prompts: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  updated_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  updated_at: Date | null;
}

export class PutSectionPromptRequest {
  @IsUUID()
  workspace_id: string;

  /** The prompt (1..20,000 characters); placeholders: {{run_name}}, {{sut_name}}, {{dataset_name}}, {{section_title}}, {{questions}}, {{data}} */
  @IsString() @Matches(/\S/, { message: 'prompt must not be blank' }) @MaxLength(MAX_PROMPT)
  prompt: string;
}

export class ReportSectionPromptResponse {
  @ApiProperty({ enum: SECTION_KEYS })
  section_key: string;
  title: string;
  /** The prompt in effect */
  prompt: string;
  /** `builtin`, or `custom` when the workspace replaced it */
  @ApiProperty({ enum: ['builtin', 'custom'] })
  source: string;
  /** The built-in prompt (what DELETE falls back to) */
  builtin_prompt: string;
  placeholders: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  updated_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  updated_at: Date | null;
}
