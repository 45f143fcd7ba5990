import { Module, OnModuleInit } from '@nestjs/common';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { ReviewController } from './review.controller.js';
import { ReviewItemsService } from './review-items.service.js';
import { ReviewLabelsService } from './review-labels.service.js';
import { ReviewQueuesService } from './review-queues.service.js';
import { ReviewValidationService } from './review-validation.service.js';
import { ReviewWorkService } from './review-work.service.js';
import { ReviewRepository } from './review.repository.js';

/** Human review queues: rubrics, items on leases, labels, adjudication, agreement and exports. */
@Module({
  imports: [DatasetsModule, RunsModule, TracesModule, WorkspacesModule],
  controllers: [ReviewController],
  providers: [
    ReviewRepository,
    ReviewQueuesService,
    ReviewItemsService,
    ReviewWorkService,
    ReviewLabelsService,
    ReviewValidationService,
  ],
  exports: [ReviewLabelsService],
})
export class ReviewModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('review_queue', 'review_queues');
  }
}
