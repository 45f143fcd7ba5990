import { Injectable } from '@nestjs/common';
import { entityList, entityPage } from '#libs/database/typed-fragments.js';
import { sql } from 'kysely';
import { ReportConfigEntity } from './entities/report-config.entity.js';
import { ReportExportEntity } from './entities/report-export.entity.js';
import { ReportSectionPromptEntity } from './entities/report-section-prompt.entity.js';
import { ReportSettingsEntity } from './entities/report-settings.entity.js';
import { ReportEntity } from './entities/report.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';

/** Reports, their exports, configs, settings and section prompts: queries only, every one by workspace. */
@Injectable()
export class ReportsRepository {
  constructor(private readonly db: Db) {}

  private get reports() {
    return this.db.repository(ReportEntity);
  }

  private get exports() {
    return this.db.repository(ReportExportEntity);
  }

  private get configs() {
    return this.db.repository(ReportConfigEntity);
  }

  private get settings() {
    return this.db.repository(ReportSettingsEntity);
  }

  private get prompts() {
    return this.db.repository(ReportSectionPromptEntity);
  }

  page(
    workspaceId: string,
    runId: string | undefined,
    window: { skip: number; take: number },
  ): Promise<[ReportEntity[], number]> {
    return entityPage(
      this.db,
      this.reports,
      (q) =>
        q
          .selectFrom('reports')
          .where('workspace_id', '=', workspaceId)
          .$if(!!runId, (query) => query.where('run_id', '=', runId!)),
      (query) => query.orderBy('created_at', 'desc').orderBy('id', 'desc'),
      window,
    );
  }

  find(workspaceId: string, id: string): Promise<ReportEntity | null> {
    return this.reports.findOne({ where: { id, workspaceId } });
  }

  /** Workspace-free, for signed-URL routes: the signature, not a workspace, authorises them. */
  findUnscoped(id: string): Promise<ReportEntity | null> {
    return this.reports.findOne({ where: { id } });
  }

  save(report: Partial<ReportEntity>): Promise<ReportEntity> {
    return this.reports.save(this.reports.create(report));
  }

  saveExport(file: Partial<ReportExportEntity>): Promise<ReportExportEntity> {
    return this.exports.save(this.exports.create(file));
  }

  /** The newest export of a format rendered from this version of the report (content not loaded). */
  latestExport(
    workspaceId: string,
    reportId: string,
    format: string,
    reportVersion: number,
  ): Promise<ReportExportEntity | null> {
    return this.exports.findOne({
      where: { workspaceId, reportId, format: format as ReportExportEntity['format'], reportVersion },
      order: { createdAt: 'DESC' },
    });
  }

  /** An export with its bytes, for the signed download route. */
  async exportWithContent(reportId: string, exportId: string): Promise<ReportExportEntity | null> {
    const [row] = await this.db.typed((q) =>
      q.selectFrom('report_exports').selectAll().where('id', '=', exportId).where('report_id', '=', reportId),
    );
    if (!row) return null;
    const [file] = entitiesFrom(this.exports, [row]);
    // Not selected by default (`select: false`), so entitiesFrom leaves it unset.
    file.content = row.content;
    return file;
  }

  listConfigs(workspaceId: string): Promise<ReportConfigEntity[]> {
    return entityList(
      this.db,
      this.configs,
      (q) => q.selectFrom('report_configs').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
    );
  }

  findConfig(workspaceId: string, id: string): Promise<ReportConfigEntity | null> {
    return this.configs.findOne({ where: { id, workspaceId } });
  }

  async configNameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'report_configs', { column: 'workspace_id', value: workspaceId }, name);
  }

  saveConfig(config: Partial<ReportConfigEntity>): Promise<ReportConfigEntity> {
    const repo = this.configs;
    return repo.save(repo.create(config));
  }

  async deleteConfig(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.configs.delete({ id, workspaceId });
    return (result.affected ?? 0) > 0;
  }

  findSettings(workspaceId: string): Promise<ReportSettingsEntity | null> {
    return this.settings.findOne({ where: { workspaceId } });
  }

  saveSettings(settings: Partial<ReportSettingsEntity>): Promise<ReportSettingsEntity> {
    return this.settings.save(this.settings.create(settings));
  }

  listPrompts(workspaceId: string): Promise<ReportSectionPromptEntity[]> {
    return entityList(
      this.db,
      this.prompts,
      (q) => q.selectFrom('report_section_prompts').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('section_key', 'asc'),
    );
  }

  findPrompt(workspaceId: string, sectionKey: string): Promise<ReportSectionPromptEntity | null> {
    return this.prompts.findOne({ where: { workspaceId, sectionKey } });
  }

  async upsertPrompt(workspaceId: string, sectionKey: string, prompt: string, userId: string | null): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('report_section_prompts')
        .values({ workspace_id: workspaceId, section_key: sectionKey, prompt, updated_by: userId })
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'section_key']).doUpdateSet((eb) => ({
            prompt: eb.ref('excluded.prompt'),
            updated_by: eb.ref('excluded.updated_by'),
            updated_at: sql<Date>`now()`,
          })),
        ),
    );
  }

  async deletePrompt(workspaceId: string, sectionKey: string): Promise<void> {
    await this.prompts.delete({ workspaceId, sectionKey });
  }
}
