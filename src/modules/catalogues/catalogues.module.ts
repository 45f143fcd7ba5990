import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '../../../libs/auth/workspace-resource.registry.js';
import { SecretsModule } from '../workspaces/secrets.module.js';
import { EmbeddingConfigsController } from './embedding-configs.controller.js';
import { EmbeddingConfigsRepository } from './embedding-configs.repository.js';
import { EmbeddingConfigsService } from './embedding-configs.service.js';
import { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import { NotificationConfigEntity } from './entities/notification-config.entity.js';
import { MetricCatalogueController } from './metric-catalogue.controller.js';
import { MetricCatalogueService } from './metric-catalogue.service.js';
import { NotificationConfigsController } from './notification-configs.controller.js';
import { NotificationConfigsRepository } from './notification-configs.repository.js';
import { NotificationConfigsService } from './notification-configs.service.js';

/** Configuration catalogues: embedding configs, notification configs and the workspace metric catalogue so far; judges, metric and eval configs come with issue 5. */
@Module({
  imports: [TypeOrmModule.forFeature([EmbeddingConfigEntity, NotificationConfigEntity]), SecretsModule],
  controllers: [EmbeddingConfigsController, MetricCatalogueController, NotificationConfigsController],
  providers: [EmbeddingConfigsService, EmbeddingConfigsRepository, MetricCatalogueService, NotificationConfigsService, NotificationConfigsRepository],
  exports: [EmbeddingConfigsService],
})
export class CataloguesModule implements OnModuleInit {
  constructor(
    private readonly registry: WorkspaceResourceRegistry,
    private readonly notifications: NotificationConfigsRepository,
  ) {}

  onModuleInit(): void {
    this.registry.register('notification_config', (id) => this.notifications.workspaceOf(id));
  }
}
