import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type IfMatchPrecondition, strongEtag } from '#libs/common/etag.js';
import { pageOf, pageWindow, type Page } from '#libs/common/pagination.js';
import { metricAvailability } from '#libs/evaluation/metric-catalogue.js';
import type { ConfigSection, ReportSection, SectionKey } from '#libs/reports/report.types.js';
import { plannedSections, SECTION_TITLES, sectionQuestions } from '#libs/reports/sections.js';
import type { JudgeEntity } from '../catalogues/entities/judge.entity.js';
import { JudgesService } from '../catalogues/judges/judges.service.js';
import type { PartitionResponse } from '../datasets/dto/dimensions.dto.js';
import { PartitionsService } from '../datasets/dimensions/partitions.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import type { RunEntity } from '../runs/entities/run.entity.js';
import { RunReadService } from '../runs/run-read.service.js';
import type {
  CreateReportRequest,
  ListReportsQuery,
  QuestionSchemaResponse,
  RegenerateReportRequest,
  ReportContentResponse,
  ReportResponse,
  ReportSectionContent,
  ReportSummary,
  UpdateReportContentRequest,
} from './dto/reports.dto.js';
import type { ReportEntity } from './entities/report.entity.js';
import { ReportBuilder } from './report-builder.service.js';
import { ReportSettingsService } from './report-settings.service.js';
import { ReportErrors } from './reports.errors.js';
import { contentResponse, reportResponse, reportSummary, sectionContent } from './reports.mapper.js';
import { ReportsRepository } from './reports.repository.js';

/** Reports built from runs: generation, reading, editing, regeneration, and the run views reports draw on. */
@Injectable()
export class ReportsService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly runs: RunReadService,
    private readonly judges: JudgesService,
    private readonly builder: ReportBuilder,
    private readonly settings: ReportSettingsService,
    private readonly versions: VersionsService,
    private readonly partitions: PartitionsService,
    private readonly audit: AuditService,
  ) {}

  async list(access: WorkspaceAccess, query: ListReportsQuery): Promise<Page<ReportSummary>> {
    // A run of another workspace is as unknown as a missing one.
    if (query.run_id) await this.requireRun(access, query.run_id);
    const [rows, total] = await this.reports.page(access.workspaceId, query.run_id, pageWindow(query));
    return pageOf(rows, total, query, reportSummary);
  }

  async require(access: WorkspaceAccess, id: string): Promise<ReportEntity> {
    const report = await this.reports.find(access.workspaceId, id);
    if (!report) throw new NotFoundError('report', id);
    return report;
  }

  async get(access: WorkspaceAccess, id: string): Promise<ReportResponse> {
    return reportResponse(await this.require(access, id));
  }

  async create(
    access: WorkspaceAccess,
    runId: string,
    body: CreateReportRequest,
    caller: Principal,
  ): Promise<ReportResponse> {
    const run = await this.requireRun(access, runId);
    const defaults = await this.settings.effective(access.workspaceId);
    const configId = body.config_id ?? defaults.defaultConfigId;
    const config = configId ? await this.reports.findConfig(access.workspaceId, configId) : null;
    if (body.config_id && !config)
      throw reference('config_id', `Workspace ${access.workspaceId} has no report config ${body.config_id}`);
    const judge = body.template_only ? null : await this.judge(access.workspaceId, body.judge_id, defaults.judgeId);
    let baseline: RunEntity | null;
    if (body.baseline_run_id) {
      if (body.baseline_run_id === runId) throw reference('baseline_run_id', 'A run cannot be its own baseline');
      baseline = await this.builder.baseline(run, body.baseline_run_id);
      if (!baseline)
        throw reference('baseline_run_id', `Workspace ${access.workspaceId} has no run ${body.baseline_run_id}`);
    } else baseline = await this.builder.baseline(run);
    const input = await this.builder.input(run, baseline);
    const planned = plannedSections(config?.sections ?? null, body.sections);
    const sections = await this.builder.sections(
      access.workspaceId,
      input,
      planned,
      judge,
      await this.settings.customPrompts(access.workspaceId),
    );
    const report = await this.reports.save({
      workspaceId: access.workspaceId,
      runId,
      configId: config?.id ?? null,
      judgeId: judge?.id ?? null,
      baselineRunId: baseline?.id ?? null,
      title: body.title ?? `Report: ${run.name || run.snapshot.sut.name}`,
      sections,
      generatedAt: new Date(),
      createdBy: caller.userId,
    });
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report.created',
      targetType: 'report',
      targetId: report.id,
      details: { run_id: runId, judge_id: report.judgeId, sections: sections.map((s) => s.key) },
    });
    return reportResponse(report);
  }

  async content(access: WorkspaceAccess, id: string): Promise<ReportContentResponse> {
    return contentResponse(await this.require(access, id));
  }

  async section(access: WorkspaceAccess, id: string, key: string): Promise<ReportSectionContent> {
    const report = await this.require(access, id);
    return sectionContent(findSection(report, key));
  }

  /** Replaces the markdown (and title) of the sections named; they are marked edited and regenerate keeps them unless told not to. */
  async updateContent(
    access: WorkspaceAccess,
    id: string,
    body: UpdateReportContentRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<ReportContentResponse> {
    const report = await this.require(access, id);
    ifMatch.check(reportEtag(report));
    const errors: string[] = [];
    const keys = body.sections.map((s) => s.key);
    for (const [i, key] of keys.entries()) {
      if (keys.indexOf(key) !== i) errors.push(`sections[${i}]: ${key} is named twice`);
      else if (!report.sections.some((s) => s.key === key))
        errors.push(
          `sections[${i}]: the report has no ${key} section (it has ${report.sections.map((s) => s.key).join(', ') || 'none'})`,
        );
    }
    if (errors.length) throw new DomainError(ReportErrors.report_content_invalid, errors.join('; '), { errors });
    const now = new Date().toISOString();
    report.sections = report.sections.map((s) => {
      const edit = body.sections.find((e) => e.key === s.key);
      return edit
        ? {
            ...s,
            markdown: edit.markdown,
            title: edit.title ?? s.title,
            edited: true,
            edited_at: now,
            edited_by: caller.userId,
          }
        : s;
    });
    if (body.title) report.title = body.title;
    const saved = await this.reports.save(report);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report.edited',
      targetType: 'report',
      targetId: id,
      details: { sections: keys, title: body.title ?? null },
    });
    return contentResponse(saved);
  }

  async deleteSection(
    access: WorkspaceAccess,
    id: string,
    key: string,
    caller: Principal,
  ): Promise<ReportContentResponse> {
    const report = await this.require(access, id);
    findSection(report, key);
    report.sections = report.sections.filter((s) => s.key !== key);
    const saved = await this.reports.save(report);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report.section_deleted',
      targetType: 'report',
      targetId: id,
      details: { section_key: key },
    });
    return contentResponse(saved);
  }

  /** Rebuilds the report's sections (or those named) from the run; edited sections stay as edited unless keep_edits is false. */
  async regenerate(
    access: WorkspaceAccess,
    id: string,
    body: RegenerateReportRequest,
    caller: Principal,
  ): Promise<ReportResponse> {
    const report = await this.require(access, id);
    const run = await this.requireRun(access, report.runId);
    const defaults = await this.settings.effective(access.workspaceId);
    const judge = body.template_only
      ? null
      : await this.judge(access.workspaceId, body.judge_id, report.judgeId ?? defaults.judgeId);
    const config = report.configId ? await this.reports.findConfig(access.workspaceId, report.configId) : null;
    const baseline = await this.builder.baseline(run, report.baselineRunId);
    const keepEdits = body.keep_edits ?? true;
    const kept = new Map<string, ReportSection>(
      keepEdits ? report.sections.filter((s) => s.edited).map((s) => [s.key, s]) : [],
    );
    const planned: ConfigSection[] = plannedSections(
      config?.sections ?? null,
      body.sections ?? report.sections.map((s) => s.key),
    );
    const only = new Set<SectionKey>(planned.map((p) => p.key).filter((k) => !kept.has(k)));
    const built = await this.builder.sections(
      access.workspaceId,
      await this.builder.input(run, baseline),
      planned,
      judge,
      await this.settings.customPrompts(access.workspaceId),
      only,
    );
    report.sections = planned.map((p) => kept.get(p.key) ?? built.find((b) => b.key === p.key)!);
    report.judgeId = judge?.id ?? null;
    report.baselineRunId = baseline?.id ?? null;
    report.generatedAt = new Date();
    const saved = await this.reports.save(report);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report.regenerated',
      targetType: 'report',
      targetId: id,
      details: { keep_edits: keepEdits, kept: [...kept.keys()], judge_id: saved.judgeId },
    });
    return reportResponse(saved);
  }

  /** The questions a report on this run answers, section by section, given its metrics and dimensions. */
  async questions(
    access: WorkspaceAccess,
    runId: string,
    configId: string | undefined,
  ): Promise<QuestionSchemaResponse> {
    const run = await this.requireRun(access, runId);
    const id = configId ?? (await this.settings.effective(access.workspaceId)).defaultConfigId;
    const config = id ? await this.reports.findConfig(access.workspaceId, id) : null;
    if (configId && !config) throw new NotFoundError('report config', configId);
    const metrics = run.snapshot.metrics.map((m) => m.name);
    const dimensions = await this.runs.dimensionNames(runId);
    const hasBaseline = (await this.runs.previousSucceededId(run)) !== null;
    return {
      run_id: runId,
      config_id: config?.id ?? null,
      metrics,
      dimensions,
      has_baseline: hasBaseline,
      sections: plannedSections(config?.sections ?? null, undefined).map((p) => {
        const texts = [
          ...sectionQuestions(p.key, metrics, dimensions, hasBaseline).map((text) => ({ text, source: 'builtin' })),
          ...(p.questions ?? []).map((text) => ({ text, source: 'config' })),
        ];
        return {
          key: p.key,
          title: p.title ?? SECTION_TITLES[p.key],
          questions: texts.map((q, n) => ({ id: `${p.key}.${n + 1}`, ...q })),
        };
      }),
    };
  }

  /** The partitions of the dataset version the run executed. */
  async partitionsOf(access: WorkspaceAccess, runId: string): Promise<PartitionResponse[]> {
    const run = await this.requireRun(access, runId);
    const { version } = await this.versions.require(access, run.datasetId, run.versionId);
    return this.partitions.list(version);
  }

  /** Partition id -> metric names: the run's metrics, then the built-in metrics the version's mapping supports. */
  async partitionMetrics(access: WorkspaceAccess, runId: string): Promise<Record<string, string[]>> {
    const run = await this.requireRun(access, runId);
    const { version } = await this.versions.require(access, run.datasetId, run.versionId);
    const names = [
      ...new Set([
        ...run.snapshot.metrics.map((m) => m.name),
        ...metricAvailability(version.mapping)
          .filter((m) => m.available)
          .map((m) => m.name),
      ]),
    ];
    const list = await this.partitions.list(version);
    return Object.fromEntries(list.map((p) => [p.id, names]));
  }

  private async requireRun(access: WorkspaceAccess, runId: string): Promise<RunEntity> {
    const run = await this.runs.find(access.workspaceId, runId);
    if (!run) throw new NotFoundError('run', runId);
    return run;
  }

  /** The judge named in the request (400 when the workspace has none such), else the default one (skipped when gone). */
  private async judge(
    workspaceId: string,
    named: string | undefined,
    fallback: string | null,
  ): Promise<JudgeEntity | null> {
    if (named) {
      const judge = await this.judges.find(workspaceId, named);
      if (!judge) throw reference('judge_id', `Workspace ${workspaceId} has no judge ${named}`);
      return judge;
    }
    return fallback ? this.judges.find(workspaceId, fallback) : null;
  }
}

/** The report's ETag: its id and version (every edit, deletion and regeneration bumps the version). */
export function reportEtag(report: { id: string; version: number }): string {
  return strongEtag('report', report.id, report.version);
}

/** The same ETag, read off the report's content. */
export function reportContentEtag(content: Pick<ReportContentResponse, 'report_id' | 'version'>): string {
  return reportEtag({ id: content.report_id, version: content.version });
}

function reference(field: string, detail: string): DomainError {
  return new DomainError(ReportErrors.report_reference_invalid, detail, { field });
}

function findSection(report: ReportEntity, key: string): ReportSection {
  const section = report.sections.find((s) => s.key === key);
  if (!section)
    throw new DomainError(ReportErrors.report_section_not_found, `Report ${report.id} has no section "${key}"`, {
      available: report.sections.map((s) => s.key),
    });
  return section;
}
