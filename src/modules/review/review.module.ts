import { Module, OnModuleInit } from '@nestjs/common';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { ReviewController } from './review.controller.js';
import { ReviewJudge } from './judging/review-judge.job.js';
import { ReviewJudgingController } from './judging/review-judging.controller.js';
import { ReviewJudgingRepository } from './judging/review-judging.repository.js';
import { ReviewJudgingService } from './judging/review-judging.service.js';
import { ReviewItemsService } from './review-items.service.js';
import { ReviewLabelsService } from './review-labels.service.js';
import { ReviewQueuesService } from './review-queues.service.js';
import { ReviewValidationService } from './review-validation.service.js';
import { ReviewWorkService } from './review-work.service.js';
import { ReviewRepository } from './review.repository.js';

/** Human review queues: rubrics, items on leases, labels, adjudication, agreement and exports. */
@Module({
  imports: [CataloguesModule, DatasetsModule, RunsModule, SecretsModule, TracesModule, WorkspacesModule],
  controllers: [ReviewController, ReviewJudgingController],
  providers: [
    ReviewRepository,
    ReviewQueuesService,
    ReviewItemsService,
    ReviewWorkService,
    ReviewLabelsService,
    ReviewValidationService,
    // Judge runs (./judging): a judge applied to the finally labelled items, as a tracked job.
    ReviewJudgingRepository,
    ReviewJudgingService,
    ReviewJudge,
  ],
  exports: [ReviewLabelsService, ReviewItemsService],
})
export class ReviewModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('review_queue', 'review_queues');
  }
}
