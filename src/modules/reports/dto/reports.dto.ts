import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { REPORT_FORMATS, SECTION_KEYS, type ReportFormat, type SectionKey } from '#libs/reports/report.types.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

/** Limits of report content, documented in docs/reports.md. */
export const MAX_SECTION_MARKDOWN = 100_000;
export const MAX_TITLE = 300;

export class ListReportsQuery extends PageQueryDto {
  /** The workspace whose reports to list */
  @IsUUID()
  workspace_id: string;

  /** Only the reports of this run */
  @IsOptional()
  @IsUUID()
  run_id?: string;
}

export class CreateReportRequest {
  /** The report's title (default: "Report: <run name>") */
  @ApiPropertyOptional({ example: 'support-bot-v2 release review' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_TITLE)
  title?: string;

  /** The report config choosing sections, order and questions (default: the workspace settings' default config, else every built-in section) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.reportConfig })
  @ValidateIfPresent()
  @IsUUID()
  config_id?: string;

  /** The judge that writes each section's narrative (default: the workspace settings' judge; none: the deterministic template) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.judge })
  @ValidateIfPresent()
  @IsUUID()
  judge_id?: string;

  /** Write every narrative from the template even when a judge is configured */
  @ApiPropertyOptional({ example: false })
  @ValidateIfPresent()
  @IsBoolean()
  template_only?: boolean;

  /** Only these sections, in this order (default: the config's) */
  @ApiPropertyOptional({
    maxItems: SECTION_KEYS.length,
    type: 'array',
    items: { type: 'string', enum: [...SECTION_KEYS] },
    example: ['summary', 'metrics_overview', 'regressions'],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SECTION_KEYS.length)
  @IsIn(SECTION_KEYS, { each: true })
  sections?: SectionKey[];

  /** The run to compare against in `regressions` (default: the previous run of the same SUT on the same dataset) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.baseRun })
  @ValidateIfPresent()
  @IsUUID()
  baseline_run_id?: string;
}

export class RegenerateReportRequest {
  /** Keep sections edited through PUT content as they are (default true); false rebuilds them too */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  keep_edits?: boolean;

  /** Rebuild with this judge instead of the one that built the report */
  @ApiPropertyOptional({ example: EXAMPLE_ID.judge })
  @ValidateIfPresent()
  @IsUUID()
  judge_id?: string;

  /** Write every narrative from the template */
  @ApiPropertyOptional({ example: false })
  @ValidateIfPresent()
  @IsBoolean()
  template_only?: boolean;

  /** The sections to have, in order (default: the report's current sections; name a deleted one to bring it back) */
  @ApiPropertyOptional({
    maxItems: SECTION_KEYS.length,
    type: 'array',
    items: { type: 'string', enum: [...SECTION_KEYS] },
    example: ['summary', 'metrics_overview', 'regressions'],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SECTION_KEYS.length)
  @IsIn(SECTION_KEYS, { each: true })
  sections?: SectionKey[];
}

export class SectionEdit {
  /** The section to change */
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  @IsIn(SECTION_KEYS)
  key: SectionKey;

  /** Its new Markdown (at most 100,000 characters) */
  @ApiProperty({
    example:
      '## Summary\n\nThe run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out.',
  })
  @IsString()
  @MaxLength(MAX_SECTION_MARKDOWN)
  markdown: string;

  /** A new title */
  @ApiPropertyOptional({ example: 'Release summary' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_TITLE)
  title?: string;
}

export class UpdateReportContentRequest {
  /** A new report title */
  @ApiPropertyOptional({ example: 'support-bot-v2 release review' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_TITLE)
  title?: string;

  /** The sections to change; the others stay as they are */
  @ApiProperty({ maxItems: SECTION_KEYS.length, type: () => [SectionEdit] })
  @IsArray()
  @ArrayMaxSize(SECTION_KEYS.length)
  @NestedObject(() => SectionEdit, { each: true })
  sections: SectionEdit[];
}

export class FormatQuery {
  /** The format (default: the workspace settings' default format for downloads, markdown for content URLs) */
  @ApiPropertyOptional({ enum: REPORT_FORMATS })
  @IsOptional()
  @IsIn(REPORT_FORMATS)
  format?: ReportFormat;
}

export class ContentUrlQuery {
  /** markdown (default) or html */
  @ApiPropertyOptional({ enum: ['markdown', 'html'] })
  @IsOptional()
  @IsIn(['markdown', 'html'])
  format?: 'markdown' | 'html';
}

export class ExportReportRequest {
  /** markdown, html or pdf (default: the workspace settings' default format) */
  @ApiPropertyOptional({ enum: REPORT_FORMATS, example: 'pdf' })
  @ValidateIfPresent()
  @IsIn(REPORT_FORMATS)
  format?: ReportFormat;
}

export class QuestionsQuery {
  /** Answer for this report config's sections and questions (default: the workspace settings' default config) */
  @IsOptional()
  @IsUUID()
  config_id?: string;
}

/** One section: its markdown, the figures behind it and who wrote it. */
export class ReportSectionContent {
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  key: string;
  @ApiProperty({ example: 'Summary' })
  title: string;
  /** The questions the section answers */
  @ApiProperty({ example: ['Did the run pass its pass rule?'] })
  questions: string[];
  /** Heading, narrative and figures as Markdown */
  @ApiProperty({
    example:
      '## Summary\n\nThe run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out.',
  })
  markdown: string;
  /** The figures behind the section, computed from the run's results */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { rows: 214, passed_rows: 199, pass_rate: 0.93, passed: true },
  })
  data: Record<string, unknown>;
  /** `judge`: the narrative came from the workspace's judge; `template`: from the deterministic template */
  @ApiProperty({ enum: ['judge', 'template'], example: 'judge' })
  generated_by: string;
  /** Why the judge's narrative was not used (the call failed); null otherwise */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  judge_error: string | null;
  /** Changed through PUT content since it was generated */
  @ApiProperty({ example: false })
  edited: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  edited_at: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  edited_by: string | null;
}

/** A report in a list. */
export class ReportSummary {
  @ApiProperty({ example: EXAMPLE_ID.report })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The run the report is built from */
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  @ApiProperty({ example: 'support-bot-v2 release review' })
  title: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.reportConfig })
  config_id: string | null;
  /** Section keys in order */
  @ApiProperty({ example: ['summary', 'metrics_overview', 'regressions'] })
  section_keys: string[];
  /** Sections whose narrative the judge wrote */
  @ApiProperty({ example: 3 })
  judge_sections: number;
  /** Sections changed through PUT content */
  @ApiProperty({ example: 0 })
  edited_sections: number;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  generated_at: Date;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class ReportResponse extends ReportSummary {
  /** The judge that wrote narratives (null: every narrative from the template) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.judge })
  judge_id: string | null;
  /** The earlier run `regressions` compares against */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.baseRun })
  baseline_run_id: string | null;
  /** Increases with every change (edit, delete, regenerate) */
  @ApiProperty({ example: 1 })
  version: number;
  @ApiProperty({ type: () => [ReportSectionContent] })
  sections: ReportSectionContent[];
}

export class ReportContentResponse {
  @ApiProperty({ example: EXAMPLE_ID.report })
  report_id: string;
  @ApiProperty({ example: 'support-bot-v2 release review' })
  title: string;
  /** The whole report as one Markdown document */
  @ApiProperty({
    example:
      '# support-bot-v2 release review\n\n## Summary\n\nThe run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out.',
  })
  markdown: string;
  @ApiProperty({ type: () => [ReportSectionContent] })
  sections: ReportSectionContent[];
  @ApiProperty({ example: 1 })
  version: number;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class ReportContentUrlResponse {
  @ApiProperty({ example: EXAMPLE_ID.report })
  report_id: string;
  /** A signed URL the service serves without a token until `expires_at` */
  @ApiProperty({
    example:
      'https://eval.example.com/reports/files/43488329-2fac-4156-acc1-c4e948966c8d/content?format=markdown&expires=1747733400&signature=9c4e…',
  })
  url: string;
  @ApiProperty({ example: EXAMPLE_AT.expires })
  expires_at: Date;
  @ApiProperty({ enum: ['markdown', 'html'], example: 'markdown' })
  format: string;
  @ApiProperty({ example: 'text/markdown; charset=utf-8' })
  content_type: string;
}

export class ReportDownloadResponse {
  @ApiProperty({ example: EXAMPLE_ID.report })
  report_id: string;
  /** The stored export the URL serves */
  @ApiProperty({ example: EXAMPLE_ID.reportExport })
  export_id: string;
  /** A signed URL the service serves without a token until `expires_at` */
  @ApiProperty({
    example:
      'https://eval.example.com/reports/files/43488329-2fac-4156-acc1-c4e948966c8d/exports/c3141298-a7ee-4566-bfb7-3da25f5af77a?expires=1747733400&signature=51af…',
  })
  url: string;
  @ApiProperty({ example: 'GET' })
  method: string;
  @ApiProperty({ example: EXAMPLE_AT.expires })
  expires_at: Date;
  @ApiProperty({ enum: REPORT_FORMATS, example: 'pdf' })
  format: string;
  @ApiProperty({ example: 'support-bot-v2-release-review.pdf' })
  filename: string;
  @ApiProperty({ example: 'application/pdf' })
  content_type: string;
  @ApiProperty({ example: 48211 })
  size_bytes: number;
  /** When the file was rendered */
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class QuestionItem {
  /** Stable within the schema: `<section>.<n>` */
  @ApiProperty({ example: 'summary.1' })
  id: string;
  @ApiProperty({ example: 'Did the run pass its pass rule?' })
  text: string;
  /** `builtin` (from the run's metrics and dimensions) or `config` (added by the report config) */
  @ApiProperty({ enum: ['builtin', 'config'], example: 'builtin' })
  source: string;
}

export class QuestionSection {
  @ApiProperty({ enum: SECTION_KEYS, example: 'summary' })
  key: string;
  @ApiProperty({ example: 'Summary' })
  title: string;
  @ApiProperty({ type: () => [QuestionItem] })
  questions: QuestionItem[];
}

export class QuestionSchemaResponse {
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.reportConfig })
  config_id: string | null;
  /** The run's metrics */
  @ApiProperty({ example: [EXAMPLE_NAME.metricConfig, 'faithfulness', 'latency'] })
  metrics: string[];
  /** The dimensions of the run's rows */
  @ApiProperty({ example: ['topic', 'customer_persona'] })
  dimensions: string[];
  /** An earlier run of the same SUT on the same dataset exists to compare with */
  @ApiProperty({ example: true })
  has_baseline: boolean;
  @ApiProperty({ type: () => [QuestionSection] })
  sections: QuestionSection[];
}
