import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { NestedObject } from '../../../../libs/common/record-validators.js';
import { REPORT_FORMATS, SECTION_KEYS, type ReportFormat, type SectionKey } from '../../../../libs/reports/report.types.js';

const present = (_: object, value: unknown) => value !== undefined;

/** Limits of report content, documented in docs/reports.md. */
export const MAX_SECTION_MARKDOWN = 100_000;
export const MAX_TITLE = 300;

export class ListReportsQuery extends PageQueryDto {
  /** The workspace whose reports to list */
  @IsUUID()
  workspace_id: string;

  /** Only the reports of this run */
  @IsOptional() @IsUUID()
  run_id?: string;
}

export class CreateReportRequest {
  /** The report's title (default: "Report: <run name>") */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(MAX_TITLE)
  title?: string;

  /** The report config choosing sections, order and questions (default: the workspace settings' default config, else every built-in section) */
  @ValidateIf(present) @IsUUID()
  config_id?: string;

  /** The judge that writes each section's narrative (default: the workspace settings' judge; none: the deterministic template) */
  @ValidateIf(present) @IsUUID()
  judge_id?: string;

  /** Write every narrative from the template even when a judge is configured */
  @ValidateIf(present) @IsBoolean()
  template_only?: boolean;

  /** Only these sections, in this order (default: the config's) */
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...SECTION_KEYS] } })
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(SECTION_KEYS.length) @IsIn(SECTION_KEYS, { each: true })
  sections?: SectionKey[];

  /** The run to compare against in `regressions` (default: the previous run of the same SUT on the same dataset) */
  @ValidateIf(present) @IsUUID()
  baseline_run_id?: string;
}

export class RegenerateReportRequest {
  /** Keep sections edited through PUT content as they are (default true); false rebuilds them too */
  @ValidateIf(present) @IsBoolean()
  keep_edits?: boolean;

  /** Rebuild with this judge instead of the one that built the report */
  @ValidateIf(present) @IsUUID()
  judge_id?: string;

  /** Write every narrative from the template */
  @ValidateIf(present) @IsBoolean()
  template_only?: boolean;

  /** The sections to have, in order (default: the report's current sections; name a deleted one to bring it back) */
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...SECTION_KEYS] } })
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(SECTION_KEYS.length) @IsIn(SECTION_KEYS, { each: true })
  sections?: SectionKey[];
}

export class SectionEdit {
  /** The section to change */
  @ApiProperty({ enum: SECTION_KEYS })
  @IsIn(SECTION_KEYS)
  key: SectionKey;

  /** Its new Markdown (at most 100,000 characters) */
  @IsString() @MaxLength(MAX_SECTION_MARKDOWN)
  markdown: string;

  /** A new title */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(MAX_TITLE)
  title?: string;
}

export class UpdateReportContentRequest {
  /** A new report title */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(MAX_TITLE)
  title?: string;

  /** The sections to change; the others stay as they are */
  @ApiProperty({ type: () => [SectionEdit] })
  @IsArray() @ArrayMaxSize(SECTION_KEYS.length) @NestedObject(() => SectionEdit, { each: true })
  sections: SectionEdit[];
}

export class FormatQuery {
  /** The format (default: the workspace settings' default format for downloads, markdown for content URLs) */
  @ApiPropertyOptional({ enum: REPORT_FORMATS })
  @IsOptional() @IsIn(REPORT_FORMATS)
  format?: ReportFormat;
}

export class ContentUrlQuery {
  /** markdown (default) or html */
  @ApiPropertyOptional({ enum: ['markdown', 'html'] })
  @IsOptional() @IsIn(['markdown', 'html'])
  format?: 'markdown' | 'html';
}

export class ExportReportRequest {
  /** markdown, html or pdf (default: the workspace settings' default format) */
  @ApiPropertyOptional({ enum: REPORT_FORMATS })
  @ValidateIf(present) @IsIn(REPORT_FORMATS)
  format?: ReportFormat;
}

export class QuestionsQuery {
  /** Answer for this report config's sections and questions (default: the workspace settings' default config) */
  @IsOptional() @IsUUID()
  config_id?: string;
}

/** One section: its markdown, the figures behind it and who wrote it. */
export class ReportSectionContent {
  @ApiProperty({ enum: SECTION_KEYS })
  key: string;
  title: string;
  /** The questions the section answers */
  questions: string[];
  /** Heading, narrative and figures as Markdown */
  markdown: string;
  /** The figures behind the section, computed from the run's results */
  @ApiProperty({ type: 'object', additionalProperties: true })
  data: Record<string, unknown>;
  /** `judge`: the narrative came from the workspace's judge; `template`: from the deterministic template */
  @ApiProperty({ enum: ['judge', 'template'] })
  generated_by: string;
  /** Why the judge's narrative was not used (the call failed); null otherwise */
  @ApiProperty({ type: 'string', nullable: true })
  judge_error: string | null;
  /** Changed through PUT content since it was generated */
  edited: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  edited_at: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  edited_by: string | null;
}

/** A report in a list. */
export class ReportSummary {
  id: string;
  workspace_id: string;
  /** The run the report is built from */
  run_id: string;
  title: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  config_id: string | null;
  /** Section keys in order */
  section_keys: string[];
  /** Sections whose narrative the judge wrote */
  judge_sections: number;
  /** Sections changed through PUT content */
  edited_sections: number;
  generated_at: Date;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export class ReportResponse extends ReportSummary {
  /** The judge that wrote narratives (null: every narrative from the template) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  judge_id: string | null;
  /** The earlier run `regressions` compares against */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  baseline_run_id: string | null;
  /** Increases with every change (edit, delete, regenerate) */
  version: number;
  @ApiProperty({ type: () => [ReportSectionContent] })
  sections: ReportSectionContent[];
}

export class ReportContentResponse {
  report_id: string;
  title: string;
  /** The whole report as one Markdown document */
  markdown: string;
  @ApiProperty({ type: () => [ReportSectionContent] })
  sections: ReportSectionContent[];
  version: number;
  updated_at: Date;
}

export class ReportContentUrlResponse {
  report_id: string;
  /** A signed URL the service serves without a token until `expires_at` */
  url: string;
  expires_at: Date;
  @ApiProperty({ enum: ['markdown', 'html'] })
  format: string;
  content_type: string;
}

export class ReportDownloadResponse {
  report_id: string;
  /** The stored export the URL serves */
  export_id: string;
  /** A signed URL the service serves without a token until `expires_at` */
  url: string;
  method: string;
  expires_at: Date;
  @ApiProperty({ enum: REPORT_FORMATS })
  format: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  /** When the file was rendered */
  created_at: Date;
}

export class QuestionItem {
  /** Stable within the schema: `<section>.<n>` */
  id: string;
  text: string;
  /** `builtin` (from the run's metrics and dimensions) or `config` (added by the report config) */
  @ApiProperty({ enum: ['builtin', 'config'] })
  source: string;
}

export class QuestionSection {
  @ApiProperty({ enum: SECTION_KEYS })
  key: string;
  title: string;
  @ApiProperty({ type: () => [QuestionItem] })
  questions: QuestionItem[];
}

export class QuestionSchemaResponse {
  run_id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  config_id: string | null;
  /** The run's metrics */
  metrics: string[];
  /** The dimensions of the run's rows */
  dimensions: string[];
  /** An earlier run of the same SUT on the same dataset exists to compare with */
  has_baseline: boolean;
  @ApiProperty({ type: () => [QuestionSection] })
  sections: QuestionSection[];
}
