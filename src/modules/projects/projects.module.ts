import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { SutsModule } from '../suts/suts.module.js';
import { ProjectEntity } from './entities/project.entity.js';
import { RecommendationEntity } from './entities/recommendation.entity.js';
import { TestPlanEntity, TestPlanVersionEntity } from './entities/test-plan.entity.js';
import { ProjectsController } from './projects.controller.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';
import { RecommendationsController } from './recommendations.controller.js';
import { RecommendationsService } from './recommendations.service.js';
import { TestPlansController } from './test-plans.controller.js';
import { TestPlansService } from './test-plans.service.js';
import './projects.errors.js';

/** Projects, test plans, coverage, trend and test-package recommendations. */
@Module({
  imports: [
    TypeOrmModule.forFeature([ProjectEntity, TestPlanEntity, TestPlanVersionEntity, RecommendationEntity]),
    DatasetsModule,
    SutsModule,
  ],
  controllers: [ProjectsController, TestPlansController, RecommendationsController],
  providers: [ProjectsService, TestPlansService, RecommendationsService, ProjectsRepository],
  exports: [ProjectsService],
})
export class ProjectsModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('project', 'projects');
    this.registry.registerTable('test_plan', 'test_plans');
    this.registry.registerTable('test_package_recommendation', 'test_package_recommendations');
  }
}
