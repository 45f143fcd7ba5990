import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '../../../libs/auth/workspace-resource.registry.js';
import { OpsModule } from '../ops/ops.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { WorkspaceEmbeddingController } from './workspace-embedding.controller.js';
import { CustomOpDeletionController } from './custom-op-deletion.controller.js';
import { EmbeddingConfigsController } from './embedding-configs.controller.js';
import { EmbeddingConfigsRepository } from './embedding-configs.repository.js';
import { EmbeddingConfigsService } from './embedding-configs.service.js';
import { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import { EvalConfigEntity } from './entities/eval-config.entity.js';
import { JudgeEntity } from './entities/judge.entity.js';
import { MetricConfigDefaultEntity } from './entities/metric-config-default.entity.js';
import { MetricConfigEntity } from './entities/metric-config.entity.js';
import { NotificationConfigEntity } from './entities/notification-config.entity.js';
import { EvalConfigsController } from './eval-configs.controller.js';
import { EvalConfigsRepository } from './eval-configs.repository.js';
import { EvalConfigsService } from './eval-configs.service.js';
import { JudgesController } from './judges.controller.js';
import { JudgesRepository } from './judges.repository.js';
import { JudgesService } from './judges.service.js';
import { MetricCatalogueController } from './metric-catalogue.controller.js';
import { MetricCatalogueService } from './metric-catalogue.service.js';
import { MetricConfigsController } from './metric-configs.controller.js';
import { MetricConfigsRepository } from './metric-configs.repository.js';
import { MetricConfigsService } from './metric-configs.service.js';
import { MetricDefaultsService } from './metric-defaults.service.js';
import { NotificationConfigsController } from './notification-configs.controller.js';
import { NotificationConfigsRepository } from './notification-configs.repository.js';
import { NotificationConfigsService } from './notification-configs.service.js';
import { NotificationDispatcher } from './notification-dispatcher.service.js';
import { WorkspaceMetricConfigsController } from './workspace-metric-configs.controller.js';

/** Configuration catalogues: judges, metric configs (versioned, with workspace defaults), eval configs, embedding configs, webhooks and the metric catalogue. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      EmbeddingConfigEntity,
      NotificationConfigEntity,
      JudgeEntity,
      MetricConfigEntity,
      MetricConfigDefaultEntity,
      EvalConfigEntity,
    ]),
    SecretsModule,
    OpsModule,
    WorkspacesModule,
  ],
  controllers: [
    EmbeddingConfigsController,
    MetricCatalogueController,
    NotificationConfigsController,
    JudgesController,
    MetricConfigsController,
    WorkspaceMetricConfigsController,
    EvalConfigsController,
    WorkspaceEmbeddingController,
    CustomOpDeletionController,
  ],
  providers: [
    EmbeddingConfigsService,
    EmbeddingConfigsRepository,
    MetricCatalogueService,
    NotificationConfigsService,
    NotificationConfigsRepository,
    JudgesService,
    JudgesRepository,
    MetricConfigsService,
    MetricConfigsRepository,
    MetricDefaultsService,
    EvalConfigsService,
    EvalConfigsRepository,
    NotificationDispatcher,
  ],
  exports: [
    EmbeddingConfigsService,
    MetricConfigsService,
    MetricDefaultsService,
    JudgesService,
    EvalConfigsService,
    NotificationDispatcher,
  ],
})
export class CataloguesModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('notification_config', 'notification_configs');
    this.registry.registerTable('judge', 'judges');
    this.registry.registerTable('eval_config', 'eval_configs');
  }
}
