import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { UrlSigner } from '#libs/common/signed-url.js';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { ReportConfigEntity } from './entities/report-config.entity.js';
import { ReportExportEntity } from './entities/report-export.entity.js';
import { ReportSectionPromptEntity } from './entities/report-section-prompt.entity.js';
import { ReportSettingsEntity } from './entities/report-settings.entity.js';
import { ReportEntity } from './entities/report.entity.js';
import { ReportBuilder } from './report-builder.service.js';
import { ReportConfigsController } from './report-configs.controller.js';
import { ReportConfigsService } from './report-configs.service.js';
import { ReportFilesController } from './report-files.controller.js';
import { ReportFilesService } from './report-files.service.js';
import { ReportSettingsController } from './report-settings.controller.js';
import { ReportSettingsService } from './report-settings.service.js';
import { ReportsController } from './reports.controller.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

/** Reports from runs, report configs, settings and section prompts. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      ReportEntity,
      ReportExportEntity,
      ReportConfigEntity,
      ReportSettingsEntity,
      ReportSectionPromptEntity,
    ]),
    RunsModule,
    DatasetsModule,
    CataloguesModule,
    SecretsModule,
  ],
  controllers: [ReportsController, ReportConfigsController, ReportSettingsController, ReportFilesController],
  providers: [
    ReportsService,
    ReportsRepository,
    ReportBuilder,
    ReportFilesService,
    ReportConfigsService,
    ReportSettingsService,
    UrlSigner,
  ],
})
export class ReportsModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('report', 'reports');
    this.registry.registerTable('report_config', 'report_configs');
  }
}
