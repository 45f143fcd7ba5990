import { Module, OnModuleInit } from '@nestjs/common';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { ReviewModule } from '../review/review.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { OnlineBackfill } from './online-backfill.job.js';
import { OnlineEvaluatorsService } from './online-evaluators.service.js';
import { OnlineFollow } from './online-follow.job.js';
import { OnlineScoring } from './online-scoring.service.js';
import { OnlineController } from './online.controller.js';
import { OnlineRepository } from './online.repository.js';
import { OnlineAlertChecker } from './alerts/alert-check.job.js';
import { OnlineAlertRulesService } from './alerts/alert-rules.service.js';
import { OnlineAlertsController } from './alerts/alerts.controller.js';
import { OnlineAlertsRepository } from './alerts/alerts.repository.js';
import './online.errors.js';

/** Online evaluation of production traces: evaluators, continuous scoring and backfills, alerts on drops. */
@Module({
  imports: [CataloguesModule, DatasetsModule, ReviewModule, RunsModule, SecretsModule, TracesModule],
  controllers: [OnlineController, OnlineAlertsController],
  providers: [
    OnlineRepository,
    OnlineScoring,
    OnlineFollow,
    OnlineBackfill,
    OnlineEvaluatorsService,
    // Alerts on drops of scores (./alerts): rules, their checks as a chain of jobs, their events.
    OnlineAlertsRepository,
    OnlineAlertChecker,
    OnlineAlertRulesService,
  ],
})
export class OnlineModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('online_evaluator', 'online_evaluators');
    this.registry.registerTable('online_backfill', 'online_backfills');
    this.registry.registerTable('online_alert_rule', 'online_alert_rules');
  }
}
