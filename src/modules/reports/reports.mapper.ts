import type { ReportSection, SectionKey } from '#libs/reports/report.types.js';
import { reportMarkdown } from '#libs/reports/render.js';
import type {
  ReportConfigResponse,
  ReportConfigSummary,
  ReportSectionPromptResponse,
} from './dto/report-configs.dto.js';
import type {
  ReportContentResponse,
  ReportDownloadResponse,
  ReportResponse,
  ReportSectionContent,
  ReportSummary,
} from './dto/reports.dto.js';
import type { SignedUrl } from '#libs/common/signed-url.js';
import type { ReportExportEntity } from './entities/report-export.entity.js';
import type { ReportConfigEntity } from './entities/report-config.entity.js';
import type { ReportEntity } from './entities/report.entity.js';
import { BUILTIN_PROMPTS, PROMPT_PLACEHOLDERS, SECTION_TITLES } from '#libs/reports/sections.js';
import type { ReportSectionPromptEntity } from './entities/report-section-prompt.entity.js';

export function sectionContent(s: ReportSection): ReportSectionContent {
  return {
    key: s.key,
    title: s.title,
    questions: s.questions,
    markdown: s.markdown,
    data: s.data,
    generated_by: s.generated_by,
    judge_error: s.judge_error,
    edited: s.edited,
    edited_at: s.edited_at,
    edited_by: s.edited_by,
  };
}

export function reportSummary(r: ReportEntity): ReportSummary {
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    run_id: r.runId,
    title: r.title,
    config_id: r.configId,
    section_keys: r.sections.map((s) => s.key),
    judge_sections: r.sections.filter((s) => s.generated_by === 'judge').length,
    edited_sections: r.sections.filter((s) => s.edited).length,
    generated_at: r.generatedAt,
    created_by: r.createdBy,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export function reportResponse(r: ReportEntity): ReportResponse {
  return {
    ...reportSummary(r),
    judge_id: r.judgeId,
    baseline_run_id: r.baselineRunId,
    version: r.version,
    sections: r.sections.map(sectionContent),
  };
}

export function renderable(r: ReportEntity) {
  return { id: r.id, title: r.title, run_id: r.runId, generated_at: r.generatedAt.toISOString(), sections: r.sections };
}

export function contentResponse(r: ReportEntity): ReportContentResponse {
  return {
    report_id: r.id,
    title: r.title,
    markdown: reportMarkdown(renderable(r)),
    sections: r.sections.map(sectionContent),
    version: r.version,
    updated_at: r.updatedAt,
  };
}

export function configSummary(c: ReportConfigEntity, defaultId: string | null): ReportConfigSummary {
  return {
    id: c.id,
    workspace_id: c.workspaceId,
    name: c.name,
    description: c.description,
    section_keys: c.sections.map((s) => s.key),
    is_default: c.id === defaultId,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export function configResponse(c: ReportConfigEntity, defaultId: string | null): ReportConfigResponse {
  return {
    ...configSummary(c, defaultId),
    sections: c.sections.map((s) => ({
      key: s.key,
      title: s.title ?? SECTION_TITLES[s.key],
      questions: s.questions ?? [],
    })),
    created_by: c.createdBy,
  };
}

export function promptResponse(key: SectionKey, custom: ReportSectionPromptEntity | null): ReportSectionPromptResponse {
  return {
    section_key: key,
    title: SECTION_TITLES[key],
    prompt: custom?.prompt ?? BUILTIN_PROMPTS[key],
    source: custom ? 'custom' : 'builtin',
    builtin_prompt: BUILTIN_PROMPTS[key],
    placeholders: PROMPT_PLACEHOLDERS.map((p) => `{{${p}}}`),
    updated_by: custom?.updatedBy ?? null,
    updated_at: custom?.updatedAt ?? null,
  };
}

/** A stored export with the signed URL that serves it. */
export function toDownloadResponse(file: ReportExportEntity, signed: SignedUrl): ReportDownloadResponse {
  return {
    report_id: file.reportId,
    export_id: file.id,
    url: signed.url,
    method: 'GET',
    expires_at: signed.expires_at,
    format: file.format,
    filename: file.filename,
    content_type: file.contentType,
    size_bytes: file.sizeBytes,
    created_at: file.createdAt,
  };
}
