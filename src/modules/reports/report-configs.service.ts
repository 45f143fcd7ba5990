import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { reportConfigTemplate } from '#libs/reports/config-template.js';
import type { CreateReportConfigRequest, ReportConfigResponse, ReportConfigSummary } from './dto/report-configs.dto.js';
import type { ReportConfigEntity } from './entities/report-config.entity.js';
import { ReportSettingsService } from './report-settings.service.js';
import { ReportErrors } from './reports.errors.js';
import { configResponse, configSummary } from './reports.mapper.js';
import { ReportsRepository } from './reports.repository.js';

/** Report configs: which sections a report has, their order and extra questions. */
@Injectable()
export class ReportConfigsService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly settings: ReportSettingsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess): Promise<ReportConfigSummary[]> {
    const { defaultConfigId } = await this.settings.effective(access.workspaceId);
    return (await this.reports.listConfigs(access.workspaceId)).map((c) => configSummary(c, defaultConfigId));
  }

  async get(access: WorkspaceAccess, id: string): Promise<ReportConfigResponse> {
    const { defaultConfigId } = await this.settings.effective(access.workspaceId);
    return configResponse(await this.require(access.workspaceId, id), defaultConfigId);
  }

  async require(workspaceId: string, id: string): Promise<ReportConfigEntity> {
    const config = await this.reports.findConfig(workspaceId, id);
    if (!config) throw new NotFoundError('report config', id);
    return config;
  }

  async create(
    access: WorkspaceAccess,
    body: CreateReportConfigRequest,
    caller: Principal,
  ): Promise<ReportConfigResponse> {
    const keys = body.sections.map((s) => s.key);
    const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
    if (twice.length)
      throw new DomainError(
        ReportErrors.report_config_invalid,
        `Each section may appear once; ${[...new Set(twice)].join(', ')} appear more than once`,
        { errors: [...new Set(twice)].map((k) => `sections: ${k} appears more than once`) },
      );
    const name = body.name.trim();
    const config = await this.transactions.run(async () => {
      if (await this.reports.configNameTaken(access.workspaceId, name))
        throw new DomainError(
          ReportErrors.report_config_name_taken,
          `The workspace already has a report config named "${name}"`,
        );
      const saved = await this.reports.saveConfig({
        workspaceId: access.workspaceId,
        name,
        description: body.description ?? '',
        sections: body.sections.map((s) => ({
          key: s.key,
          ...(s.title ? { title: s.title } : {}),
          questions: s.questions ?? [],
        })),
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'report_config.created',
        targetType: 'report_config',
        targetId: saved.id,
        details: { name },
      });
      return saved;
    });
    return configResponse(config, null);
  }

  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      if (!(await this.reports.deleteConfig(access.workspaceId, id))) throw new NotFoundError('report config', id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'report_config.deleted',
        targetType: 'report_config',
        targetId: id,
        details: {},
      });
    });
  }

  template(): string {
    return reportConfigTemplate();
  }
}
