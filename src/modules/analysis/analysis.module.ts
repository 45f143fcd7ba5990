import { Module } from '@nestjs/common';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { AnalysisController } from './analysis.controller.js';
import { AnalysisRepository } from './analysis.repository.js';
import { AnalysisRunner } from './analysis-runner.job.js';
import { AnalysisService } from './analysis.service.js';
import { AnalysisPropertiesController } from './properties.controller.js';

/** Analyses (text, annotation, visual) and clustering of dataset versions, computed through the queue. */
@Module({
  imports: [DatasetsModule, CataloguesModule],
  controllers: [AnalysisController, AnalysisPropertiesController],
  providers: [AnalysisService, AnalysisRepository, AnalysisRunner],
})
export class AnalysisModule {}
