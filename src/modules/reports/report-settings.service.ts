import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { REPORT_FORMATS, SECTION_KEYS, type ReportFormat, type SectionKey } from '#libs/reports/report.types.js';
import { JudgesService } from '../catalogues/judges/judges.service.js';
import type {
  PutSectionPromptRequest,
  ReportSectionPromptResponse,
  ReportSettingsResponse,
  UpdateReportSettingsRequest,
} from './dto/report-configs.dto.js';
import { ReportErrors } from './reports.errors.js';
import { ReportsRepository } from './reports.repository.js';
import { promptResponse } from './reports.mapper.js';

/** A workspace's report defaults as they apply (built-in defaults when never set). */
export interface EffectiveSettings {
  defaultConfigId: string | null;
  judgeId: string | null;
  formats: ReportFormat[];
  defaultFormat: ReportFormat;
}

/** Workspace report settings and section prompts (built-in unless the workspace replaced them). */
@Injectable()
export class ReportSettingsService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly judges: JudgesService,
    private readonly audit: AuditService,
  ) {}

  async effective(workspaceId: string): Promise<EffectiveSettings> {
    const s = await this.reports.findSettings(workspaceId);
    return {
      defaultConfigId: s?.defaultConfigId ?? null,
      judgeId: s?.judgeId ?? null,
      formats: s?.formats ?? [...REPORT_FORMATS],
      defaultFormat: s?.defaultFormat ?? 'pdf',
    };
  }

  async get(access: WorkspaceAccess): Promise<ReportSettingsResponse> {
    const s = await this.reports.findSettings(access.workspaceId);
    const e = await this.effective(access.workspaceId);
    const prompts = await this.reports.listPrompts(access.workspaceId);
    return {
      workspace_id: access.workspaceId,
      default_config_id: e.defaultConfigId,
      judge_id: e.judgeId,
      formats: e.formats,
      default_format: e.defaultFormat,
      custom_prompts: prompts.map((p) => p.sectionKey).sort(),
      updated_by: s?.updatedBy ?? null,
      updated_at: s?.updatedAt ?? null,
    };
  }

  async update(
    access: WorkspaceAccess,
    body: UpdateReportSettingsRequest,
    caller: Principal,
  ): Promise<ReportSettingsResponse> {
    const current = await this.effective(access.workspaceId);
    const next: EffectiveSettings = {
      defaultConfigId: body.default_config_id === undefined ? current.defaultConfigId : body.default_config_id,
      judgeId: body.judge_id === undefined ? current.judgeId : body.judge_id,
      formats: body.formats ? [...new Set(body.formats)] : current.formats,
      defaultFormat: body.default_format ?? current.defaultFormat,
    };
    if (!body.default_format && !next.formats.includes(next.defaultFormat)) next.defaultFormat = next.formats[0];
    if (next.defaultConfigId && !(await this.reports.findConfig(access.workspaceId, next.defaultConfigId)))
      throw invalid(
        'default_config_id',
        `Workspace ${access.workspaceId} has no report config ${next.defaultConfigId}`,
      );
    if (next.judgeId && !(await this.judges.find(access.workspaceId, next.judgeId)))
      throw invalid('judge_id', `Workspace ${access.workspaceId} has no judge ${next.judgeId}`);
    if (!next.formats.includes(next.defaultFormat))
      throw invalid(
        'default_format',
        `default_format ${next.defaultFormat} is not one of formats (${next.formats.join(', ')})`,
      );
    await this.reports.saveSettings({
      workspaceId: access.workspaceId,
      defaultConfigId: next.defaultConfigId,
      judgeId: next.judgeId,
      formats: next.formats,
      defaultFormat: next.defaultFormat,
      updatedBy: caller.userId,
    });
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report_settings.updated',
      targetType: 'workspace',
      targetId: access.workspaceId,
      details: {
        default_config_id: next.defaultConfigId,
        judge_id: next.judgeId,
        formats: next.formats,
        default_format: next.defaultFormat,
      },
    });
    return this.get(access);
  }

  /** Section key -> the workspace's own prompt (sections without one use the built-in prompt). */
  async customPrompts(workspaceId: string): Promise<Map<string, string>> {
    return new Map((await this.reports.listPrompts(workspaceId)).map((p) => [p.sectionKey, p.prompt]));
  }

  async listPrompts(access: WorkspaceAccess): Promise<ReportSectionPromptResponse[]> {
    const custom = new Map((await this.reports.listPrompts(access.workspaceId)).map((p) => [p.sectionKey, p]));
    return SECTION_KEYS.map((key) => promptResponse(key, custom.get(key) ?? null));
  }

  async getPrompt(access: WorkspaceAccess, key: string): Promise<ReportSectionPromptResponse> {
    const section = knownSection(key);
    return promptResponse(section, await this.reports.findPrompt(access.workspaceId, section));
  }

  async putPrompt(
    access: WorkspaceAccess,
    key: string,
    body: PutSectionPromptRequest,
    caller: Principal,
  ): Promise<ReportSectionPromptResponse> {
    const section = knownSection(key);
    await this.reports.upsertPrompt(access.workspaceId, section, body.prompt, caller.userId);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report_prompt.updated',
      targetType: 'workspace',
      targetId: access.workspaceId,
      details: { section_key: section, length: body.prompt.length },
    });
    return this.getPrompt(access, section);
  }

  /** Falls back to the built-in prompt; deleting a prompt never replaced is a no-op (still 204). */
  async deletePrompt(access: WorkspaceAccess, key: string, caller: Principal): Promise<void> {
    const section = knownSection(key);
    await this.reports.deletePrompt(access.workspaceId, section);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report_prompt.reset',
      targetType: 'workspace',
      targetId: access.workspaceId,
      details: { section_key: section },
    });
  }
}

export function knownSection(key: string): SectionKey {
  if (!(SECTION_KEYS as readonly string[]).includes(key))
    throw new DomainError(
      ReportErrors.report_section_key_unknown,
      `"${key}" is not a report section; use one of ${SECTION_KEYS.join(', ')}`,
      { available: [...SECTION_KEYS] },
    );
  return key as SectionKey;
}

function invalid(field: string, detail: string): DomainError {
  return new DomainError(ReportErrors.report_settings_invalid, detail, { field });
}
