import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { UrlSigner } from '#libs/common/signed-url.js';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { OpsModule } from '../ops/ops.module.js';
import { SutsModule } from '../suts/suts.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { DiffService } from './results/diff.service.js';
import { GateController } from './gate/gate.controller.js';
import { GateService } from './gate/gate.service.js';
import { GateVerdictsRepository } from './gate/gate-verdicts.repository.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { ProjectTrendsController } from './trends/project-trends.controller.js';
import { ProjectTrendsService } from './trends/project-trends.service.js';
import { RunEntity } from './entities/run.entity.js';
import { ResultsService } from './results/results.service.js';
import { RunEventStreams } from './run-event-streams.service.js';
import { RunExecutor } from './execution/run-executor.job.js';
import { ProjectTrendsRepository } from './trends/project-trends.repository.js';
import { TraceJoins } from './execution/trace-joins.service.js';
import { RecordedRuns } from './execution/recorded-runs.service.js';
import { RecordedItemsRepository } from './execution/recorded-items.repository.js';
import { TracesModule } from '../traces/traces.module.js';
import { RunFilesController } from './results/run-files.controller.js';
import { RunPlanner } from './execution/run-planner.service.js';
import { RunQueueService } from './run-queue.service.js';
import { RunReadService } from './run-read.service.js';
import { RunSummaries } from './execution/run-summaries.service.js';
import { RunsController } from './runs.controller.js';
import { RunsRepository } from './runs.repository.js';
import { RunsService } from './runs.service.js';
import { JudgeValidityController } from './validity/judge-validity.controller.js';
import { JudgeValidityService } from './validity/judge-validity.service.js';

/** Runs: execution through the queue, events, results, diffs and exports, and the release gate. */
@Module({
  imports: [
    TypeOrmModule.forFeature([RunEntity]),
    DatasetsModule,
    SutsModule,
    CataloguesModule,
    OpsModule,
    SecretsModule,
    ProjectsModule,
    TracesModule,
  ],
  controllers: [RunsController, RunFilesController, GateController, ProjectTrendsController, JudgeValidityController],
  providers: [
    RunsService,
    RunsRepository,
    RunReadService,
    RunEventStreams,
    RunExecutor,
    ProjectTrendsRepository,
    TraceJoins,
    RecordedRuns,
    RecordedItemsRepository,
    RunPlanner,
    ResultsService,
    DiffService,
    GateService,
    GateVerdictsRepository,
    RunQueueService,
    RunSummaries,
    ProjectTrendsService,
    UrlSigner,
    JudgeValidityService,
  ],
  exports: [RunReadService, JudgeValidityService, RunPlanner],
})
export class RunsModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('run', 'runs');
  }
}
