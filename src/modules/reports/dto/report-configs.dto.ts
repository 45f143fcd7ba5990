import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';
import { NestedObject } from '#libs/common/record-validators.js';
import { REPORT_FORMATS, SECTION_KEYS, type ReportFormat, type SectionKey } from '#libs/reports/report.types.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const MAX_PROMPT = 20_000;
export const MAX_QUESTIONS = 20;

export class WorkspaceQuery {
  /** The workspace */
  @IsUUID()
  workspace_id: string;
}

export class ReportConfigSectionDto {
  /** A built-in section */
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  @IsIn(SECTION_KEYS)
  key: SectionKey;

  /** Its title in reports (default: the built-in title) */
  @ApiPropertyOptional({ example: 'Release summary' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  title?: string;

  /** Questions the section should answer beside the built-in ones (up to 20, each up to 500 characters) */
  @ApiPropertyOptional({ maxItems: MAX_QUESTIONS, example: ['Is the release ready to ship?'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_QUESTIONS)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(500, { each: true })
  questions?: string[];
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.reportConfig,
  description: 'What the release board reads',
  sections: [
    { key: 'summary', title: 'Release summary', questions: ['Is the release ready to ship?'] },
    { key: 'regressions' },
    { key: 'failure_examples' },
  ],
})
export class CreateReportConfigRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace (case-insensitive), 1..100 characters */
  @ApiProperty({ example: EXAMPLE_NAME.reportConfig })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ example: 'What the release board reads' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** The sections, in report order (1..6, each key once) */
  @ApiProperty({ maxItems: SECTION_KEYS.length, type: () => [ReportConfigSectionDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SECTION_KEYS.length)
  @NestedObject(() => ReportConfigSectionDto, { each: true })
  sections: ReportConfigSectionDto[];
}

export class ReportConfigSectionResponse {
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  key: string;
  @ApiProperty({ example: 'Release summary' })
  title: string;
  /** The config's extra questions */
  @ApiProperty({ example: ['Is the release ready to ship?'] })
  questions: string[];
}

export class ReportConfigSummary {
  @ApiProperty({ example: EXAMPLE_ID.reportConfig })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.reportConfig })
  name: string;
  @ApiProperty({ example: 'What the release board reads' })
  description: string;
  /** Section keys in report order */
  @ApiProperty({ example: ['summary', 'regressions', 'failure_examples'] })
  section_keys: string[];
  /** The workspace settings name this config as the default */
  @ApiProperty({ example: true })
  is_default: boolean;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class ReportConfigResponse extends ReportConfigSummary {
  @ApiProperty({ type: () => [ReportConfigSectionResponse] })
  sections: ReportConfigSectionResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
}

export class UpdateReportSettingsRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** The config new reports use when the request names none (null: every built-in section) */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.reportConfig })
  @IsOptional()
  @IsUUID()
  default_config_id?: string | null;

  /** The judge that writes narratives (null: the deterministic template) */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  @IsOptional()
  @IsUUID()
  judge_id?: string | null;

  /** Formats exports and downloads may use (1..3) */
  @ApiPropertyOptional({
    maxItems: REPORT_FORMATS.length,
    type: 'array',
    items: { type: 'string', enum: [...REPORT_FORMATS] },
    example: ['markdown', 'html', 'pdf'],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(REPORT_FORMATS.length)
  @IsIn(REPORT_FORMATS, { each: true })
  formats?: ReportFormat[];

  /** The format of exports and downloads that name none; one of formats */
  @ApiPropertyOptional({ enum: REPORT_FORMATS, example: 'pdf' })
  @ValidateIfPresent()
  @IsIn(REPORT_FORMATS)
  default_format?: ReportFormat;
}

export class ReportSettingsResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.reportConfig })
  default_config_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  judge_id: string | null;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...REPORT_FORMATS] },
    example: ['markdown', 'html', 'pdf'],
  })
  formats: string[];
  @ApiProperty({ enum: REPORT_FORMATS, example: 'pdf' })
  default_format: string;
  /** Sections whose prompt the workspace replaced */
  @ApiProperty({ example: ['summary'] })
  custom_prompts: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  updated_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  updated_at: Date | null;
}

export class PutSectionPromptRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** The prompt (1..20,000 characters); placeholders: {{run_name}}, {{sut_name}}, {{dataset_name}}, {{section_title}}, {{questions}}, {{data}} */
  @ApiProperty({
    example:
      'Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}} for the release board. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  })
  @IsString()
  @Matches(/\S/, { message: 'prompt must not be blank' })
  @MaxLength(MAX_PROMPT)
  prompt: string;
}

export class ReportSectionPromptResponse {
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  section_key: string;
  @ApiProperty({ example: 'Summary' })
  title: string;
  /** The prompt in effect */
  @ApiProperty({
    example:
      'Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}} for the release board. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  })
  prompt: string;
  /** `builtin`, or `custom` when the workspace replaced it */
  @ApiProperty({ enum: ['builtin', 'custom'], example: 'custom' })
  source: string;
  /** The built-in prompt (what DELETE falls back to) */
  @ApiProperty({
    example:
      'Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}}. …',
  })
  builtin_prompt: string;
  @ApiProperty({
    example: ['{{run_name}}', '{{sut_name}}', '{{dataset_name}}', '{{section_title}}', '{{questions}}', '{{data}}'],
  })
  placeholders: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  updated_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  updated_at: Date | null;
}
