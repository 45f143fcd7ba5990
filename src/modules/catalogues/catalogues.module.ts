import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { OpsModule } from '../ops/ops.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { WorkspaceEmbeddingController } from './embedding-configs/workspace-embedding.controller.js';
import { CustomOpDeletionController } from './metrics/custom-op-deletion.controller.js';
import { EmbeddingConfigsController } from './embedding-configs/embedding-configs.controller.js';
import { EmbeddingConfigsRepository } from './embedding-configs/embedding-configs.repository.js';
import { EmbeddingConfigsService } from './embedding-configs/embedding-configs.service.js';
import { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import { EvalConfigEntity } from './entities/eval-config.entity.js';
import { JudgeEntity } from './entities/judge.entity.js';
import { MetricConfigDefaultEntity } from './entities/metric-config-default.entity.js';
import { MetricConfigEntity } from './entities/metric-config.entity.js';
import { JudgeValidationEntity } from './entities/judge-validation.entity.js';
import { JudgeValidationsController } from './judge-validations/judge-validations.controller.js';
import { JudgeValidationsRepository } from './judge-validations/judge-validations.repository.js';
import { JudgeValidationsService } from './judge-validations/judge-validations.service.js';
import { NotificationConfigEntity } from './entities/notification-config.entity.js';
import { EvalConfigsController } from './eval-configs/eval-configs.controller.js';
import { EvalConfigsRepository } from './eval-configs/eval-configs.repository.js';
import { EvalConfigsService } from './eval-configs/eval-configs.service.js';
import { JudgesController } from './judges/judges.controller.js';
import { JudgesRepository } from './judges/judges.repository.js';
import { JudgesService } from './judges/judges.service.js';
import { MetricCatalogueController } from './metrics/metric-catalogue.controller.js';
import { MetricCatalogueService } from './metrics/metric-catalogue.service.js';
import { MetricConfigsController } from './metrics/metric-configs.controller.js';
import { MetricConfigsRepository } from './metrics/metric-configs.repository.js';
import { MetricConfigsService } from './metrics/metric-configs.service.js';
import { MetricDefaultsService } from './metrics/metric-defaults.service.js';
import { NotificationConfigsController } from './notifications/notification-configs.controller.js';
import { NotificationConfigsRepository } from './notifications/notification-configs.repository.js';
import { NotificationConfigsService } from './notifications/notification-configs.service.js';
import { NotificationDispatcher } from './notifications/notification-dispatcher.service.js';
import { WorkspaceMetricConfigsController } from './metrics/workspace-metric-configs.controller.js';

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
      JudgeValidationEntity,
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
    JudgeValidationsController,
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
    JudgeValidationsService,
    JudgeValidationsRepository,
  ],
  exports: [
    EmbeddingConfigsService,
    MetricConfigsService,
    MetricDefaultsService,
    JudgesService,
    EvalConfigsService,
    NotificationDispatcher,
    JudgeValidationsService,
  ],
})
export class CataloguesModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('notification_config', 'notification_configs');
    this.registry.registerTable('judge', 'judges');
    this.registry.registerTable('eval_config', 'eval_configs');
    this.registry.registerTable('judge_validation', 'judge_validations');
  }
}
